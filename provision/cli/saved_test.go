package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/provision-dev/provision/provision/servers"
)

// TestSavedPlanSources: a saved plan applies only to the specs and the
// variables it was made from. After each kind of change (a spec file
// edited, added or removed, a variable, a module's file) apply PLANFILE
// refuses, naming what moved, and writes nothing to a real agent; with
// nothing moved, it applies.
func TestSavedPlanSources(t *testing.T) {
	agent := servers.NewConsul(t)
	module := "variable \"port\" {\n  type = number\n}\n\nservice \"mod\" {\n  port = var.port\n}\n"
	main := "project = \"saved\"\n\nvariable \"port\" {\n  default = 8080\n}\n\nservice \"web\" {\n  port = var.port\n}\n\nmodule \"m\" {\n  source = \"./modules/m\"\n  port   = 9090\n}\n"
	for _, c := range []struct {
		name, says string
		change     func(dir string) error
		args       []string
	}{
		{"spec edited", "main.hcl changed", func(dir string) error {
			return os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(main+"\nkey \"a\" {\n  value = \"1\"\n}\n"), 0o644)
		}, nil},
		{"spec added", "extra.hcl was added", func(dir string) error {
			return os.WriteFile(filepath.Join(dir, "extra.hcl"), []byte("key \"a\" {\n  value = \"1\"\n}\n"), 0o644)
		}, nil},
		{"spec removed", "other.hcl was removed", func(dir string) error { return os.Remove(filepath.Join(dir, "other.hcl")) }, nil},
		{"module edited", "modules/m/main.hcl changed", func(dir string) error {
			return os.WriteFile(filepath.Join(dir, "modules", "m", "main.hcl"), []byte(module+"\nservice \"mod2\" {\n  port = 1\n}\n"), 0o644)
		}, nil},
		{"variable", "the value of var.port changed", func(string) error { return nil }, []string{"-var", "port=8081"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			env := map[string]string{"CONSUL_HTTP_ADDR": agent.Addr, "NO_COLOR": "1"}
			for name, src := range map[string]string{"main.hcl": main, "other.hcl": "# nothing yet\n", "modules/m/main.hcl": module} {
				os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755)
				if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			planFile := filepath.Join(t.TempDir(), "p.plan")
			if code, out, errOut := runCLI(t, env, "plan", "-out", planFile, dir); code != exitOK {
				t.Fatalf("plan: exit %d\n%s%s", code, out, errOut)
			}
			if err := c.change(dir); err != nil {
				t.Fatal(err)
			}
			code, out, errOut := runCLI(t, env, append(append([]string{"apply"}, c.args...), planFile)...)
			if code == exitOK || !strings.Contains(out+errOut, c.says) || !strings.Contains(out+errOut, "Nothing was sent") {
				t.Errorf("apply after %s: exit %d, want a refusal naming %q\n%s%s", c.name, code, c.says, out, errOut)
			}
			if services := consulDo(t, agent.Addr, "GET", "/v1/agent/services", ""); strings.Contains(services, `"web"`) {
				t.Errorf("written after the refusal: %s", services)
			}
		})
	}
	// A module kept at the top of the repository, outside the specs'
	// folder (issue 74): its file is a source of the plan too.
	t.Run("shared module edited", func(t *testing.T) {
		repo := t.TempDir()
		env := map[string]string{"CONSUL_HTTP_ADDR": agent.Addr, "NO_COLOR": "1"}
		for name, src := range map[string]string{".git/HEAD": "ref: refs/heads/main\n", "modules/m/main.hcl": module,
			"envs/staging/main.hcl": strings.Replace(main, "./modules/m", "../../modules/m", 1)} {
			os.MkdirAll(filepath.Dir(filepath.Join(repo, name)), 0o755)
			if err := os.WriteFile(filepath.Join(repo, name), []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		planFile := filepath.Join(t.TempDir(), "p.plan")
		if code, out, errOut := runCLI(t, env, "plan", "-out", planFile, filepath.Join(repo, "envs", "staging")); code != exitOK {
			t.Fatalf("plan: exit %d\n%s%s", code, out, errOut)
		}
		if err := os.WriteFile(filepath.Join(repo, "modules", "m", "main.hcl"), []byte(module+"\n# edited\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		code, out, errOut := runCLI(t, env, "apply", planFile)
		if code == exitOK || !strings.Contains(out+errOut, "../../modules/m/main.hcl changed") || !strings.Contains(out+errOut, "Nothing was sent") {
			t.Errorf("apply after the shared module changed: exit %d\n%s%s", code, out, errOut)
		}
	})
	t.Run("nothing moved", func(t *testing.T) {
		dir := t.TempDir()
		env := map[string]string{"CONSUL_HTTP_ADDR": agent.Addr, "NO_COLOR": "1"}
		os.MkdirAll(filepath.Join(dir, "modules", "m"), 0o755)
		os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(main), 0o644)
		os.WriteFile(filepath.Join(dir, "modules", "m", "main.hcl"), []byte(module), 0o644)
		planFile := filepath.Join(t.TempDir(), "p.plan")
		if code, out, errOut := runCLI(t, env, "plan", "-out", planFile, dir); code != exitOK {
			t.Fatalf("plan: exit %d\n%s%s", code, out, errOut)
		}
		if code, out, errOut := runCLI(t, env, "apply", planFile); code != exitOK {
			t.Fatalf("apply: exit %d\n%s%s", code, out, errOut)
		}
	})
}

// TestSavedPlanSensitive: a saved plan keeps a sensitive variable's value
// only as a keyed digest (the file never holds it); given again with
// another value, apply PLANFILE refuses and sends nothing; with the same
// one, it applies.
func TestSavedPlanSensitive(t *testing.T) {
	agent := servers.NewConsul(t)
	t.Setenv("CONSUL_HTTP_ADDR", agent.Addr) // Consul's client reads it itself
	dir := t.TempDir()
	spec := "project = \"sens\"\n\nvariable \"token\" {\n  type      = string\n  sensitive = true\n}\n\nkey \"apps/sens/token\" {\n  value = var.token\n}\n"
	if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	planFile := filepath.Join(t.TempDir(), "p.plan")
	env := func(token string) map[string]string {
		return map[string]string{"CONSUL_HTTP_ADDR": agent.Addr, "NO_COLOR": "1", "PROVISION_VAR_token": token}
	}
	withEnv := func(e map[string]string, args ...string) (int, string) {
		var out, errOut strings.Builder
		c := testCLI(strings.NewReader(""), &out, &errOut)
		c.getenv = func(k string) string { return e[k] }
		c.environ = func() []string {
			var kv []string
			for k, v := range e {
				kv = append(kv, k+"="+v)
			}
			return kv
		}
		return c.run(args), out.String() + errOut.String()
	}
	if code, out := withEnv(env("first-s3cret"), "plan", "-out", planFile, dir); code != exitOK {
		t.Fatalf("plan: exit %d\n%s", code, out)
	}
	if b, _ := os.ReadFile(planFile); strings.Contains(string(b), "first-s3cret") || !strings.Contains(string(b), `"digest": "argon2id:`) {
		t.Fatalf("the plan file holds the value, or no digest of it:\n%s", b)
	}
	code, out := withEnv(env("other-s3cret"), "apply", planFile)
	if code == exitOK || !strings.Contains(out, "another value of the sensitive var.token") || strings.Contains(out, "s3cret") {
		t.Errorf("apply with another sensitive value: exit %d\n%s", code, out)
	}
	if got := consulDo(t, agent.Addr, "GET", "/v1/kv/apps/sens/token?raw", ""); got != "" {
		t.Errorf("written after the refusal: %q", got)
	}
	if code, out := withEnv(env("first-s3cret"), "apply", planFile); code != exitOK {
		t.Errorf("apply with the same value: exit %d\n%s", code, out)
	}
}
