package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPlacesDecodedAsBefore: the proxy and consul blocks, places since
// they left the language, decode in the scopes they always had: a proxy
// block last (its prefix may be a module's output, or name a traefik
// block), a consul block first (agents are not known to it), and neither
// is a namespace of references.
func TestPlacesDecodedAsBefore(t *testing.T) {
	tests := []struct {
		name, spec string
		want       string // in validate's or plan's output
		fails      bool
	}{
		{"a proxy prefix from a module's output", `locals {
  prefix = module.edge.prefix
}

module "edge" {
  source = "./edge"
}

proxy {
  prefix = try(local.prefix, "traefik")
}

service "web" {
  port = 8080
  frontend {
    rule = "Path:/api"
    forward_auth {
      address = "http://127.0.0.1:8080/auth"
    }
  }
}
`, `"edge.frontend.rule=Path:/api"`, false},
		{"a proxy prefix that names a traefik block", `traefik "t" {
  api = "http://127.0.0.1:1"
  url = "http://127.0.0.1:1"
}

proxy {
  prefix = traefik.t
}
`, "", false},
		{"a consul block that names an agent", `agent "a" {
  address = "127.0.0.1:1"
}

consul {
  datacenter = agent.a
}
`, "Reference to agent not known here", true},
		{"a reference to proxy", `locals {
  a = proxy.x
}

key "k" {
  value = local.a
}
`, "Unknown reference", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			files := map[string]string{"main.hcl": "project = \"p\"\n\n" + tt.spec, "edge/main.hcl": "output \"prefix\" {\n  value = \"edge\"\n}\n"}
			for name, src := range files {
				os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755)
				if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			code, out, errOut := runCLI(t, nil, "plan", "-greenfield", "-json", dir)
			if (code != exitOK) != tt.fails || !strings.Contains(out+errOut, tt.want) {
				t.Errorf("exit %d, want a failure: %v, and %q in:\n%s%s", code, tt.fails, tt.want, out, errOut)
			}
		})
	}
}
