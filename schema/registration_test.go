package schema_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/provision-dev/provision/provision/consul"
	"github.com/provision-dev/provision/provision/langtest"
	"github.com/provision-dev/provision/schema"
)

// TestRegistrationForms decodes the registration's other fields written
// as Consul's service definitions write them, as blocks, and as
// arguments: both give the same wire form, which schema.Wire writes in
// the table's order and SpecJSON names back.
func TestRegistrationForms(t *testing.T) {
	blocks := `project = "p"
service "web-proxy" {
  port = 21000
  kind = "connect-proxy"
  proxy {
    destination_service_name = "web"
    local_service_port       = 8080
    upstreams {
      destination_name = "db"
      local_bind_port  = 9191
    }
    upstreams {
      destination_name = "cache"
      local_bind_port  = 9192
      config = { connect_timeout_ms = 500 }
    }
    expose {
      checks = true
    }
  }
  tagged_addresses {
    wan = { address = "198.51.100.5", port = 80 }
  }
  weights {
    passing = 10
    warning = 1
  }
}
`
	arguments := `project = "p"
service "web-proxy" {
  port = 21000
  kind = "connect-proxy"
  proxy = {
    destination_service_name = "web"
    local_service_port       = 8080
    upstreams = [
      { destination_name = "db", local_bind_port = 9191 },
      { destination_name = "cache", local_bind_port = 9192, config = { connect_timeout_ms = 500 } },
    ]
    expose = { checks = true }
  }
  tagged_addresses = { wan = { address = "198.51.100.5", port = 80 } }
  weights          = { passing = 10, warning = 1 }
}
`
	want := map[string]any{
		"Kind": "connect-proxy",
		"Proxy": map[string]any{
			"DestinationServiceName": "web", "LocalServicePort": 8080.0,
			"Upstreams": []any{
				map[string]any{"DestinationName": "db", "LocalBindPort": 9191.0},
				map[string]any{"DestinationName": "cache", "LocalBindPort": 9192.0, "Config": map[string]any{"connect_timeout_ms": 500.0}},
			},
			"Expose": map[string]any{"Checks": true},
		},
		"TaggedAddresses": map[string]any{"wan": map[string]any{"Address": "198.51.100.5", "Port": 80.0}},
		"Weights":         map[string]any{"Passing": 10.0, "Warning": 1.0},
	}
	for name, spec := range map[string]string{"blocks": blocks, "arguments": arguments} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(spec), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg, diags := schema.NewParser(langtest.Language).LoadDir(dir, schema.Inputs{})
		if diags.HasErrors() {
			t.Fatalf("%s: %s", name, diags)
		}
		got := consul.Services(cfg)[0].Fields
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", name, d)
		}
		if wire := string(schema.Wire(consul.RegistrationFields, got)); wire != `{"Kind":"connect-proxy","TaggedAddresses":{"wan":{"Address":"198.51.100.5","Port":80}},"Weights":{"Passing":10,"Warning":1},`+
			`"Proxy":{"DestinationServiceName":"web","LocalServicePort":8080,"Upstreams":[{"DestinationName":"db","LocalBindPort":9191},{"DestinationName":"cache","LocalBindPort":9192,"Config":{"connect_timeout_ms":500}}],"Expose":{"Checks":true}}}` {
			t.Errorf("%s: on the wire %s", name, wire)
		}
		proxy, _ := schema.ArgWired(consul.RegistrationFields, "Proxy")
		if named := schema.SpecJSON(proxy, got["Proxy"]).(map[string]any); named["destination_service_name"] != "web" || named["upstreams"].([]any)[1].(map[string]any)["local_bind_port"] != 9192.0 {
			t.Errorf("%s: named back %v", name, named)
		}
	}
}
