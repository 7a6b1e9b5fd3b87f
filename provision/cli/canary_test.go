package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/provision-dev/provision/provision/servers"
)

// canaries are secrets the canary test puts where a user keeps them: the
// Consul token, the Elasticsearch password and API key in the
// environment, and a sensitive input variable.
var canaries = map[string]string{
	"CONSUL_HTTP_TOKEN":          "canary-consul-token-51f0",
	"ELASTICSEARCH_PASSWORD":     "canary-es-password-8a2c",
	"ELASTICSEARCH_API_KEY":      "canary-es-api-key-77d1",
	"PROVISION_VAR_owner_secret": "canary-sensitive-var-c3e9",
}

const canarySpec = `project = "canary"

variable "owner_secret" {
  type      = string
  sensitive = true
}

variable "search_url" {
  type = string
}

service "canary-api" {
  id   = "canary-api-1"
  port = 18400
  meta = {
    contact = var.owner_secret
    path    = "/x/${var.owner_secret}/y"
  }
  frontend {
    rule = "Path:/canary"
    forward_auth {
      address = "http://127.0.0.1:18400/auth"
    }
  }
}

search "t1" {
  url          = var.search_url
  cluster_name = "canary"
}

index "canary" {
  search = "canary"
  mapping "doc" {
    properties = {
      title = { type = "string", null_value = var.owner_secret }
    }
  }
}
`

// TestNoSecretInAnyOutput runs every command and view with canary secrets
// set, against a real Consul agent and a real Elasticsearch, under GitHub
// Actions (so diagnostics are also printed as annotations), and finds none
// of them in any output or any file the commands wrote.
func TestNoSecretInAnyOutput(t *testing.T) {
	agent := servers.NewConsul(t)
	es := servers.NewCluster(t, "canary")

	dir := t.TempDir()
	specs := filepath.Join(dir, "specs")
	os.MkdirAll(specs, 0o755)
	os.WriteFile(filepath.Join(specs, "main.hcl"), []byte(strings.Replace(canarySpec, `search = "canary"`, `search = "t1"`, 1)), 0o644)
	bad := filepath.Join(dir, "bad")
	os.MkdirAll(bad, 0o755)
	os.WriteFile(filepath.Join(bad, "main.hcl"), []byte(strings.Replace(canarySpec, `path:/canary`, `Path:/canary`, 1)+
		"\nservice \"leak\" {\n  port = 1\n  tags = [var.owner_secret]\n}\n"), 0o644)

	os.MkdirAll(filepath.Join(specs, "tests"), 0o755)
	// provision test reads no PROVISION_VAR_*: the run names its values
	// (not the canary's: a test file is no secret).
	os.WriteFile(filepath.Join(specs, "tests", "canary.provtest.hcl"), []byte(fmt.Sprintf("run \"live\" {\n  snapshot  = \"snap.json\"\n  variables = { owner_secret = \"test-value\", search_url = %q }\n}\n", es.URL)), 0o644)
	env := map[string]string{
		"CONSUL_HTTP_ADDR":         agent.Addr,
		"PROVISION_VAR_search_url": es.URL,
		"ELASTICSEARCH_USERNAME":   "elastic",
		"GITHUB_ACTIONS":           "true",
		"NO_COLOR":                 "1",
	}
	for k, v := range canaries {
		env[k] = v
	}
	run := func(args ...string) string {
		var stdout, stderr bytes.Buffer
		c := testCLI(strings.NewReader(""), &stdout, &stderr)
		c.getenv = func(k string) string { return env[k] }
		c.environ = func() []string {
			var out []string
			for k, v := range env {
				out = append(out, k+"="+v)
			}
			return out
		}
		for k, v := range env {
			t.Setenv(k, v)
		}
		c.run(args)
		return stdout.String() + stderr.String()
	}
	planFile := filepath.Join(dir, "canary.plan")
	outputs := map[string]string{
		"validate":              run("validate", specs),
		"validate -json":        run("validate", "-json", specs),
		"validate (bad specs)":  run("validate", bad),
		"plan":                  run("plan", specs),
		"plan -json":            run("plan", "-json", specs),
		"plan -format=markdown": run("plan", "-format=markdown", specs),
		"plan (bad specs)":      run("plan", bad),
		"plan -out":             run("plan", "-out", planFile, specs),
		"show":                  run("show", planFile),
		"show -json":            run("show", "-json", planFile),
		"show -format=markdown": run("show", "-format=markdown", planFile),
		"graph":                 run("graph", specs),
		"apply saved plan":      run("apply", planFile),
		"plan after apply":      run("plan", "-detailed-exitcode", specs),
		"snapshot":              run("snapshot", "-out", filepath.Join(specs, "tests", "snap.json"), specs),
		"plan -snapshot":        run("plan", "-snapshot", filepath.Join(specs, "tests", "snap.json"), specs),
		"test -update":          run("test", "-update", specs),
		"apply -json":           run("apply", "-json", "-auto-approve", "-var", "owner_secret=other", specs),
		"destroy":               run("destroy", "-auto-approve", "-indices", specs),
	}
	env["CONSUL_HTTP_ADDR"] = "127.0.0.1:1" // nothing listens there
	outputs["plan with the agent down"] = run("plan", specs)

	if snap, err := os.ReadFile(filepath.Join(specs, "tests", "snap.json")); err != nil || !bytes.Contains(snap, []byte(`"contact": "(sensitive)"`)) {
		t.Errorf("the snapshot does not record the sensitive meta as (sensitive): %v\n%s", err, snap)
	}
	if !strings.Contains(outputs["test -update"], "wrote "+filepath.Join(specs, "tests", "golden", "canary", "live.json")) {
		t.Errorf("test -update:\n%s", outputs["test -update"])
	}
	if !strings.Contains(outputs["plan -snapshot"], "Planned from the snapshot") {
		t.Errorf("plan -snapshot:\n%s", outputs["plan -snapshot"])
	}
	if !strings.Contains(outputs["apply saved plan"], "Apply complete: 2 created") {
		t.Errorf("the saved plan did not apply:\n%s", outputs["apply saved plan"])
	}
	if !strings.Contains(outputs["plan (bad specs)"], "Sensitive value in a tag") {
		t.Errorf("a sensitive value in a tag is not refused:\n%s", outputs["plan (bad specs)"])
	}
	if !strings.Contains(outputs["plan"], `"contact": "(sensitive)"`) {
		t.Errorf("the plan does not show the sensitive value as (sensitive):\n%s", outputs["plan"])
	}
	for name, out := range outputs {
		for k, v := range canaries {
			if strings.Contains(out, v) {
				t.Errorf("%s prints the value of %s:\n%s", name, k, out)
			}
		}
	}
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		f, _ := os.Open(path)
		b, _ := io.ReadAll(f)
		f.Close()
		for k, v := range canaries {
			if bytes.Contains(b, []byte(v)) {
				t.Errorf("%s holds the value of %s", path, k)
			}
		}
		return nil
	})
}
