package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/provision-dev/provision/provision/servers"
)

// fieldsSpec is a gated service with the registration's other fields:
// weights, a WAN address and a TTL check (which provision registers in
// warning, a state Traefik 2 and 3 serve); %s is what each step adds.
const fieldsSpec = `project = "fields"

variable "port" {
  type = number
}

service "gated-api" {
  id      = "gated-api-1"
  address = "127.0.0.1"
  port    = var.port
  %s

  frontend {
    rule = "Path:/api"
    forward_auth {
      address               = "http://127.0.0.1:${var.port}/auth"
      auth_response_headers = ["X-Auth-User"]
    }
  }
}
`

// TestRegistrationFieldsThroughTraefik applies a gated service whose
// registration has weights, tagged addresses and a TTL check, then changes
// each, against a real Consul 1.15.4 read by real Traefik 2.11 and 3.6:
// after every apply, /api answers 401 without a token, 401 with a wrong
// one and 200 with the right one.
func TestRegistrationFieldsThroughTraefik(t *testing.T) {
	agent := servers.NewConsul(t)
	proxies := map[string]*servers.Traefik{}
	for _, gen := range []int{2, 3} {
		proxies[fmt.Sprintf("traefik%d", gen)] = servers.NewTraefik(t, agent.Addr, servers.TraefikOptions{Generation: gen, ExposedByDefault: true})
	}
	port := serveApp(t)
	provision := buildProvision(t)
	specs := t.TempDir()
	env := append(os.Environ(), "CONSUL_HTTP_ADDR="+agent.Addr, "NO_COLOR=1")

	fields := func(passing int, wan, ttl, notes string) string {
		return fmt.Sprintf("weights = { passing = %d, warning = 1 }\n  tagged_addresses = { wan = { address = %q, port = 80 } }\n"+
			"  check \"heartbeat\" {\n    ttl   = %q\n    notes = %q\n  }", passing, wan, ttl, notes)
	}
	created, updated := "Apply complete: 1 created, 0 updated, 0 deleted.", "Apply complete: 0 created, 1 updated, 0 deleted."
	steps := []struct{ name, fields, want string }{
		{"weights, a WAN address and a TTL check", fields(10, "198.51.100.5", "30s", ""), created},
		{"weights changed", fields(3, "198.51.100.5", "30s", ""), updated},
		{"WAN address changed", fields(3, "198.51.100.6", "30s", ""), updated},
		{"TTL changed, notes added", fields(3, "198.51.100.6", "1m", "passed by the service"), updated},
	}
	for _, step := range steps {
		spec := fmt.Sprintf(fieldsSpec, step.fields)
		if err := os.WriteFile(filepath.Join(specs, "main.hcl"), []byte(spec), 0o644); err != nil {
			t.Fatal(err)
		}
		out := runProvision(t, provision, env, "apply", "-auto-approve", "-var", fmt.Sprintf("port=%d", port), specs)
		if !strings.Contains(out, step.want) {
			t.Fatalf("%s: apply:\n%s", step.name, out)
		}
		for name, p := range proxies {
			status := func(token string) int { return apiStatus(t, p.URL, token) }
			waitStatus(t, func() int { return status("") }, 401)
			wrong, right := status("wrong-token"), status(testToken)
			if wrong != 401 || right != 200 {
				t.Errorf("%s, %s: wrong token %d, right token %d; want 401 and 200", name, step.name, wrong, right)
			}
			t.Logf("%s, %s: no token %d, wrong token %d, right token %d", name, step.name, status(""), wrong, right)
		}
		if out := runProvision(t, provision, env, "plan", "-var", fmt.Sprintf("port=%d", port), specs); !strings.Contains(out, "No changes.") {
			t.Errorf("%s: the plan after the apply:\n%s", step.name, out)
		}
	}
}
