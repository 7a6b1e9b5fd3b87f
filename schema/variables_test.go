package schema_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/provision-dev/provision/provision/consul"
	"github.com/provision-dev/provision/provision/consul/kv"
	"github.com/provision-dev/provision/provision/langtest"
	"github.com/provision-dev/provision/schema"
)

func TestVariableSources(t *testing.T) {
	type endpoint struct {
		Address string
		Port    int
	}
	tests := map[string]struct {
		in       schema.Inputs
		want     endpoint
		wantDiag string
	}{
		"defaults": {want: endpoint{"127.0.0.1", 8080}},
		"environment overrides the default": {
			in:   schema.Inputs{Env: []string{"PROVISION_VAR_api_port=8181", "PROVISION_VAR_unrelated=x"}},
			want: endpoint{"127.0.0.1", 8181},
		},
		"a var file overrides the environment": {
			in: schema.Inputs{
				Env:      []string{"PROVISION_VAR_api_port=8181"},
				VarFiles: []string{"../testdata/vars/override.hcl.vars"},
			},
			want: endpoint{"10.0.0.7", 9090},
		},
		"-var overrides a var file": {
			in: schema.Inputs{
				VarFiles: []string{"../testdata/vars/override.hcl.vars"},
				Vars:     []string{"api_port=7070"},
			},
			want: endpoint{"10.0.0.7", 7070},
		},
		"-var for an undeclared variable": {
			in:       schema.Inputs{Vars: []string{"api_hots=x"}},
			wantDiag: "<-var api_hots>:1,1-2: Value for undeclared variable",
		},
		"-var that does not fit the type": {
			in:       schema.Inputs{Vars: []string{"api_port=many"}},
			wantDiag: "<-var api_port>:1,1-5: Invalid value for variable",
		},
		"-var without a value": {
			in:       schema.Inputs{Vars: []string{"api_port"}},
			wantDiag: "<-var api_port>:1,1-1: Invalid -var option",
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			cfg, diags := schema.NewParser(langtest.Language).LoadDir("../testdata/vars", tt.in)
			if tt.wantDiag != "" {
				if len(diags) != 1 || diags[0].Subject.String()+": "+diags[0].Summary != tt.wantDiag {
					t.Fatalf("diagnostics = %v, want exactly %q", diags, tt.wantDiag)
				}
				return
			}
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			got := endpoint{consul.Services(cfg)[0].Address, consul.Services(cfg)[0].Port}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestUntypedVariablesStayStrings: a value given on the command line or
// in the environment to a variable without a type is a string, as in
// Terraform: 1.10 stays "1.10", 007 stays "007".
func TestUntypedVariablesStayStrings(t *testing.T) {
	dir := t.TempDir()
	spec := `project = "v"
variable "tag" {}
variable "build" {}
service "s" {
  port = 1
  meta = { tag = var.tag, build = var.build }
}
`
	if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, diags := schema.NewParser(langtest.Language).LoadDir(dir, schema.Inputs{Vars: []string{"tag=1.10"}, Env: []string{"PROVISION_VAR_build=007"}})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if diff := cmp.Diff(map[string]string{"tag": "1.10", "build": "007"}, consul.Services(cfg)[0].Meta); diff != "" {
		t.Errorf("meta (-want +got):\n%s", diff)
	}
}

// TestVariableValidation: a validation rule holds the value whatever its
// source: a -var that breaks it is refused at the variable with the
// rule's message (never the value), one that keeps it passes.
func TestVariableValidation(t *testing.T) {
	path := filepath.Join(t.TempDir(), "main.hcl")
	src := "project = \"x\"\n\nvariable \"port\" {\n  type      = number\n  default   = 8080\n  sensitive = true\n\n  validation {\n    condition     = var.port >= 1024\n    error_message = \"port is 1024 or more.\"\n  }\n\n  validation {\n    condition     = var.port != 8443\n    error_message = \"port 8443 is the proxy's.\"\n  }\n}\n\nservice \"api\" {\n  port = var.port\n}\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		vars []string
		want string
	}{
		{nil, ""},
		{[]string{"port=2000"}, ""},
		{[]string{"port=81"}, "main.hcl:3,1-16: Invalid value for variable: port is 1024 or more."},
		{[]string{"port=8443"}, "main.hcl:3,1-16: Invalid value for variable: port 8443 is the proxy's."},
	} {
		_, diags := schema.NewParser(langtest.Language).LoadFiles([]string{path}, schema.Inputs{Vars: tt.vars})
		got := ""
		for _, d := range diags {
			got += filepath.Base(d.Subject.String()) + ": " + d.Summary + ": " + strings.SplitN(d.Detail, "\n", 2)[0]
			if strings.Contains(strings.ReplaceAll(d.Detail, path, "main.hcl"), "81") { // the temporary directory's name may hold it
				t.Errorf("-var %v: the detail shows the value: %s", tt.vars, d.Detail)
			}
		}
		if got != tt.want {
			t.Errorf("-var %v: %q, want %q", tt.vars, got, tt.want)
		}
	}
}

// TestVariableFilesAsTerraform: a -var-file in JSON (Terraform's
// .tfvars.json), and the files read with no -var-file as Terraform reads
// terraform.tfvars and *.auto.tfvars: provision.tfvars, then
// provision.tfvars.json, then *.auto.tfvars(.json) in lexical order, each
// over the one before and over the environment; a -var-file and -var
// given still win.
func TestVariableFilesAsTerraform(t *testing.T) {
	spec := "project = \"v\"\n\nvariable \"a\" {\n  default = \"spec\"\n}\n\nvariable \"b\" {\n  default = \"spec\"\n}\n\nvariable \"c\" {\n  default = \"spec\"\n}\n\n" +
		"key \"k\" {\n  value = \"${var.a} ${var.b} ${var.c}\"\n}\n"
	dir := writeTree(t, map[string]string{
		"specs/main.hcl":              spec,
		"specs/provision.tfvars":      "a = \"tfvars\"\nb = \"tfvars\"\nc = \"tfvars\"\n",
		"specs/provision.tfvars.json": `{"b": "tfvars.json", "c": "tfvars.json"}`,
		"specs/x.auto.tfvars.json":    `{"c": "auto.json"}`,
		"given.json":                  `{"a": "given"}`,
	})
	value := func(in schema.Inputs) string {
		t.Helper()
		cfg, diags := schema.NewParser(langtest.Language).LoadDir(filepath.Join(dir, "specs"), in)
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		return kv.Keys(cfg)[0].Value
	}
	if got := value(schema.Inputs{Env: []string{"PROVISION_VAR_a=env"}}); got != "tfvars tfvars.json auto.json" {
		t.Errorf("the files read by default: %q", got)
	}
	if got := value(schema.Inputs{VarFiles: []string{filepath.Join(dir, "given.json")}, Vars: []string{"c=flag"}}); got != "given tfvars.json flag" {
		t.Errorf("-var-file x.json and -var over them: %q", got)
	}
	// A value in a file for a variable these specs do not declare is a
	// warning (the file may serve other specs), as Terraform's.
	os.WriteFile(filepath.Join(dir, "specs", "stale.auto.tfvars"), []byte("gone = 1\n"), 0o644)
	cfg, diags := schema.NewParser(langtest.Language).LoadDir(filepath.Join(dir, "specs"), schema.Inputs{})
	if diags.HasErrors() || len(diags) != 1 || diags[0].Summary != "Value for undeclared variable" || cfg == nil {
		t.Errorf("an undeclared name in an auto variable file: %v", diags)
	}
	os.Remove(filepath.Join(dir, "specs", "stale.auto.tfvars"))
	// A saved plan's values win over the environment and the files, not
	// over a -var given again (which its sources then refuse).
	saved := map[string][]byte{"a": []byte(`"saved"`), "b": []byte(`"saved"`)}
	if got := value(schema.Inputs{Env: []string{"PROVISION_VAR_a=env"}, Saved: saved, Vars: []string{"b=flag"}}); got != "saved flag auto.json" {
		t.Errorf("a saved plan's values: %q", got)
	}
}
