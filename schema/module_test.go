package schema_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision/addrs"
	"github.com/provision-dev/provision/provision/consul"
	"github.com/provision-dev/provision/provision/consul/kv"
	"github.com/provision-dev/provision/provision/langtest"
	"github.com/provision-dev/provision/schema"
)

var gatedModule = map[string]string{
	"modules/gated-api/main.hcl": `variable "name" {
  type = string
}

variable "port" {
  type = number
}

variable "token" {
  type      = string
  default   = ""
  sensitive = true
}

service "api" {
  id   = var.name
  port = var.port
  meta = { team = "edge" }
}

key "limits" {
  path  = "apps/${var.name}/limits"
  value = { rate = 1 }
}

module "inner" {
  source = "../inner"
  name   = var.name
}

output "id" {
  value = var.name
}

output "token" {
  value     = var.token
  sensitive = true
}
`,
	"modules/inner/main.hcl": `variable "name" {
  type = string
}

key "flag" {
  path  = "apps/${var.name}/${path.module}"
  value = "on"
}
`,
}

// TestModules: module blocks call a directory of specs once per instance
// (for_each, count, or one), modules call modules, and each object is
// addressed by the instance that declares it; root outputs see the
// modules' outputs, and a sensitive one is a secret.
func TestModules(t *testing.T) {
	files := map[string]string{"main.hcl": `project = "mods"

variable "token" {
  type      = string
  sensitive = true
  default   = "t0k3n-value"
}

module "gated" {
  for_each = { a = 18001, b = 18002 }
  source   = "./modules/gated-api"
  name     = "api-${each.key}"
  port     = each.value
  token    = var.token
}

module "many" {
  count  = 2
  source = "./modules/gated-api"
  name   = "c${count.index}"
  port   = 18100 + count.index
}

output "ids" {
  value = [for k, m in module.gated : m.id]
}

output "token" {
  value     = module.gated["a"].token
  sensitive = true
}
`}
	for k, v := range gatedModule {
		files[k] = v
	}
	root := writeTree(t, files)
	cfg, diags := schema.NewParser(langtest.Language).LoadDir(root, schema.Inputs{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	var got []string
	for _, s := range consul.Services(cfg) {
		got = append(got, s.Module.String()+" service "+s.Name)
	}
	for _, k := range kv.Keys(cfg) {
		got = append(got, k.Module.String()+" key "+k.Name)
	}
	slices.Sort(got)
	want := []string{
		`module.gated["a"] key apps/api-a/limits`, `module.gated["a"] service api-a`,
		`module.gated["a"].module.inner key apps/api-a/modules/inner`,
		`module.gated["b"] key apps/api-b/limits`, `module.gated["b"] service api-b`,
		`module.gated["b"].module.inner key apps/api-b/modules/inner`,
		`module.many[0] key apps/c0/limits`, `module.many[0] service c0`, `module.many[0].module.inner key apps/c0/modules/inner`,
		`module.many[1] key apps/c1/limits`, `module.many[1] service c1`, `module.many[1].module.inner key apps/c1/modules/inner`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("objects (-want +got):\n%s", diff)
	}
	var outputs []string
	for _, o := range cfg.Outputs {
		outputs = append(outputs, fmt.Sprintf("%s=%s sensitive=%t", o.Name, o.Value.GoString(), o.Sensitive))
	}
	if len(outputs) != 2 || !strings.Contains(outputs[0], `"api-a"`) || !strings.Contains(outputs[0], `"api-b"`) || !strings.Contains(outputs[1], "sensitive=true") {
		t.Errorf("outputs: %q", outputs)
	}
	if !slices.Contains(cfg.Secrets, "t0k3n-value") {
		t.Errorf("the sensitive input is not a secret of the specs: %q", cfg.Secrets)
	}
}

// TestModulesBadInput: each mistake in a module call is one diagnostic
// at its range, and nothing is planned.
func TestModulesBadInput(t *testing.T) {
	for _, tt := range []struct {
		name, call string
		extra      map[string]string
		link       string // the name of a symbolic link, under modules, to a module outside the specs
		want       string // summary, and the file:line it is at
	}{
		{"missing source dir", `source = "./modules/none"`, nil, "", "Module not found at main.hcl:4"},
		{"not local", `source = "github.com/x/y"`, nil, "", "Invalid module source at main.hcl:4"},
		{"outside", `source = "../elsewhere"`, nil, "", "Module outside the specs at main.hcl:4"},
		{"unknown input", "source = \"./modules/gated-api\"\n  name = \"x\"\n  port = 1\n  colour = \"red\"", nil, "", "Unsupported module input at main.hcl:7"},
		{"missing input", "source = \"./modules/gated-api\"\n  name = \"x\"", nil, "", "Missing required module input at main.hcl:3"},
		{"root-only block", `source = "./modules/bad"`, map[string]string{"modules/bad/main.hcl": "search \"t1\" {\n  url          = \"http://127.0.0.1:9200\"\n  cluster_name = \"t1\"\n}\n"}, "", "search block in a module at modules/bad/main.hcl:1"},
		{"datacenter block", `source = "./modules/bad"`, map[string]string{"modules/bad/main.hcl": "consul \"dc2\" {\n  address = \"10.1.0.1:8500\"\n}\n"}, "", "consul block in a module at modules/bad/main.hcl:1"},
		{"consul block", `source = "./modules/bad"`, map[string]string{"modules/bad/main.hcl": "\nconsul {\n  datacenter = \"dc1\"\n}\n"}, "", "consul block in a module at modules/bad/main.hcl:2"},
		{"project", `source = "./modules/bad"`, map[string]string{"modules/bad/main.hcl": "project = \"x\"\n"}, "", "Project in a module at modules/bad/main.hcl:1"},
		{"cycle", `source = "./modules/loop"`, map[string]string{"modules/loop/main.hcl": "module \"again\" {\n  source = \"./\"\n}\n"}, "", "Module cycle at modules/loop/main.hcl:2"},
		{"cycle of two", `source = "./modules/a"`, map[string]string{"modules/a/main.hcl": "module \"b\" {\n  source = \"../b\"\n}\n", "modules/b/main.hcl": "module \"a\" {\n  source = \"../a\"\n}\n"}, "", "Module cycle at modules/b/main.hcl:2"},
		{"symlink out", `source = "./modules/out"`, nil, "out", "Module outside the specs at main.hcl:4"},
		{"output naming nothing", "source = \"./modules/gated-api\"\n  name = \"x\"\n  port = 1", nil, "", "Unsupported module output at main.hcl:10"},
		{"same object twice, each block", "count = 2\n  source = \"./modules/each\"", map[string]string{"modules/each/main.hcl": "service \"s\" {\n  for_each = toset([\"a\"])\n  id       = \"fixed-${each.key}\"\n  port     = 1\n}\n"}, "", "Duplicate service ID at modules/each/main.hcl:3"},
		{"count and for_each", "count = 2\n  for_each = toset([\"a\"])\n  source = \"./modules/gated-api\"\n  name = \"x\"\n  port = 1", nil, "", "Invalid combination of count and for_each at main.hcl:4"},
		{"same object twice", "for_each = toset([\"a\", \"b\"])\n  source = \"./modules/gated-api\"\n  name = \"same\"\n  port = 1", nil, "", "Duplicate service ID at modules/gated-api/main.hcl:16"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{"main.hcl": "project = \"mods\"\n\nmodule \"m\" {\n  " + tt.call + "\n}\n\noutput \"nothing\" {\n  value = module.m.none\n}\n"}
			for k, v := range gatedModule {
				files[k] = v
			}
			for k, v := range tt.extra {
				files[k] = v
			}
			root := writeTree(t, files)
			if tt.link != "" {
				out := writeTree(t, gatedModule)
				if err := os.Symlink(filepath.Join(out, "modules", "gated-api"), filepath.Join(root, "modules", tt.link)); err != nil {
					t.Fatal(err)
				}
			}
			_, diags := schema.NewParser(langtest.Language).LoadDir(root, schema.Inputs{})
			var got []string
			for _, d := range diags.Errs() {
				d := d.(*hcl.Diagnostic)
				rel, _ := filepath.Rel(root, d.Subject.Filename)
				got = append(got, fmt.Sprintf("%s at %s:%d", d.Summary, filepath.ToSlash(rel), d.Subject.Start.Line))
			}
			if !slices.Contains(got, tt.want) {
				t.Errorf("diagnostics %q, want %q", got, tt.want)
			}
		})
	}
}

// TestSharedModule: two projects of one repository call one module kept
// at its top (issue 74's layout): it loads from either, its file() reads
// beside it, and each project is its own; outside the repository (by
// "..", by a symbolic link) it is refused at its source. Without git,
// PROVISION_ROOT names the folder; one that does not hold the specs is
// refused.
func TestSharedModule(t *testing.T) {
	shared := "variable \"team\" {\n  type = string\n}\n\nkey \"limits\" {\n  path  = \"apps/${var.team}/limits\"\n  value = jsondecode(file(\"${path.module}/limits.json\"))\n}\n"
	project := func(name string) string {
		return "project = \"" + name + "\"\n\nmodule \"kv\" {\n  source = \"../../../modules/kv\"\n  team   = \"" + name + "\"\n}\n"
	}
	files := map[string]string{
		".git/HEAD":              "ref: refs/heads/main\n",
		"modules/kv/main.hcl":    shared,
		"modules/kv/limits.json": `{"rate": 10, "burst": 5}`,
		"teams/a/specs/main.hcl": project("a"),
		"teams/b/specs/main.hcl": project("b"),
		"teams/c/specs/main.hcl": "project = \"c\"\n\nmodule \"kv\" {\n  source = \"../../../../elsewhere\"\n  team   = \"c\"\n}\n",
		"teams/d/specs/main.hcl": "project = \"d\"\n\nmodule \"kv\" {\n  source = \"../../../modules/out\"\n  team   = \"d\"\n}\n",
	}
	root := writeTree(t, files)
	elsewhere := writeTree(t, map[string]string{"kv/main.hcl": shared, "kv/limits.json": "{}"})
	if err := os.Symlink(filepath.Join(elsewhere, "kv"), filepath.Join(root, "modules", "out")); err != nil {
		t.Fatal(err)
	}
	for _, team := range []string{"a", "b"} {
		cfg, diags := schema.NewParser(langtest.Language).LoadDir(filepath.Join(root, "teams", team, "specs"), schema.Inputs{})
		if diags.HasErrors() {
			t.Fatalf("project %s: %s", team, diags)
		}
		if cfg.Project != team || len(kv.Keys(cfg)) != 1 || kv.Keys(cfg)[0].Name != "apps/"+team+"/limits" {
			t.Errorf("project %s: %q, keys %+v", team, cfg.Project, kv.Keys(cfg))
		}
	}
	// git's own files are never read, though inside the repository: a
	// checkout's .git/config holds the CI's token.
	os.WriteFile(filepath.Join(root, ".git", "config"), []byte("[http]\n\textraheader = AUTHORIZATION: basic s3cr3t\n"), 0o644)
	os.MkdirAll(filepath.Join(root, "teams", "g", "specs"), 0o755)
	os.WriteFile(filepath.Join(root, "teams", "g", "specs", "main.hcl"), []byte("project = \"g\"\n\nkey \"k\" {\n  value = file(\"../../../.git/config\")\n}\n"), 0o644)
	if _, diags := schema.NewParser(langtest.Language).LoadDir(filepath.Join(root, "teams", "g", "specs"), schema.Inputs{}); !diags.HasErrors() || !strings.Contains(diags.Error(), "inside .git") || strings.Contains(diags.Error(), "s3cr3t") {
		t.Errorf("file() of .git/config: %s", diags)
	}
	for _, team := range []string{"c", "d"} {
		_, diags := schema.NewParser(langtest.Language).LoadDir(filepath.Join(root, "teams", team, "specs"), schema.Inputs{})
		if !diags.HasErrors() || diags.Errs()[0].(*hcl.Diagnostic).Summary != "Module outside the repository" || diags.Errs()[0].(*hcl.Diagnostic).Subject.Start.Line != 4 {
			t.Errorf("project %s, a module outside the repository: %s", team, diags)
		}
	}
	// Without git the specs' folder is the bound, unless PROVISION_ROOT
	// widens it (writeTree's folders are not in a repository).
	norepo := writeTree(t, map[string]string{"specs/main.hcl": "project = \"n\"\n\nmodule \"kv\" {\n  source = \"../modules/kv\"\n  team   = \"n\"\n}\n",
		"modules/kv/main.hcl": shared, "modules/kv/limits.json": `{"rate": 1, "burst": 1}`})
	specs := filepath.Join(norepo, "specs")
	if _, diags := schema.NewParser(langtest.Language).LoadDir(specs, schema.Inputs{}); !diags.HasErrors() || diags.Errs()[0].(*hcl.Diagnostic).Summary != "Module outside the specs" {
		t.Errorf("no git, no root: %s", diags)
	}
	if _, diags := schema.NewParser(langtest.Language).LoadDir(specs, schema.Inputs{Env: []string{"PROVISION_ROOT=" + norepo}}); diags.HasErrors() {
		t.Errorf("PROVISION_ROOT: %s", diags)
	}
	if _, diags := schema.NewParser(langtest.Language).LoadDir(specs, schema.Inputs{Env: []string{"PROVISION_ROOT=" + elsewhere}}); !diags.HasErrors() || diags.Errs()[0].(*hcl.Diagnostic).Summary != "Invalid root" {
		t.Errorf("PROVISION_ROOT that does not hold the specs: %s", diags)
	}
}

// TestModuleWarningOnce: a module called twice checks its blocks once
// per call; a warning of one of them is said once, at its declaration,
// to every view.
func TestModuleWarningOnce(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"main.hcl":   "project = \"w\"\n\nmodule \"a\" {\n  source = \"./m\"\n  name   = \"a\"\n}\n\nmodule \"b\" {\n  source = \"./m\"\n  name   = \"b\"\n}\n",
		"m/main.hcl": "variable \"name\" {\n  type = string\n}\n\nservice \"api\" {\n  name = var.name\n  id   = var.name\n  port = 8080\n  frontend {\n    rule = \"Path:/${var.name}\"\n    forward_auth {\n      address              = \"http://127.0.0.1:8080/auth\"\n      trust_forward_header = true\n    }\n  }\n}\n",
	})
	_, diags := schema.NewParser(langtest.Language).LoadDir(dir, schema.Inputs{})
	n := 0
	for _, d := range diags {
		if d.Summary == "The auth endpoint trusts the client's X-Forwarded headers" {
			n++
		}
	}
	if diags.HasErrors() || n != 1 {
		t.Errorf("the warning %d times: %s", n, diags)
	}
}

// TestModulesByPlace: the module of an object is found by its place, kind
// and name (a key of one path in two datacenters, each in its module),
// and by kind and name alone for a change at another place than its
// declaration's (the delete of a service moved off another agent); an
// import without a place names the key of the project's own datacenter.
func TestModulesByPlace(t *testing.T) {
	root := writeTree(t, map[string]string{
		"main.hcl": `project = "mods"

consul {
  datacenter = "dc1"
}

consul "dc2" {
  address = "10.1.0.1:8500"
}

agent "a" {
  address = "10.0.0.1:8500"
}

agent "b" {
  address = "10.0.0.2:8500"
}

module "one" {
  source = "./site"
}

module "two" {
  source = "./site"
  consul = consul.dc2
  id     = "web-2"
}

import {
  to = module.one.key["apps/mode"]
}
`,
		"site/main.hcl": `variable "consul" {
  type    = string
  default = ""
}

variable "id" {
  type    = string
  default = "web-1"
}

key "apps/mode" {
  consul = var.consul
  value  = "on"
}

service "web" {
  id    = var.id
  agent = "a"
  port  = 80
}
`})
	cfg, diags := schema.NewParser(langtest.Language).LoadDir(root, schema.Inputs{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	modules := cfg.Modules()
	for a, want := range map[addrs.Addr]string{
		{Kind: kv.Key, Name: "apps/mode"}:                    "module.one",
		{In: "consul.dc2", Kind: kv.Key, Name: "apps/mode"}:  "module.two",
		{In: "agent.a", Kind: consul.Service, Name: "web-2"}: "module.two",
		{Kind: consul.Service, Name: "web-2"}:                "module.two", // a delete on agent.b
	} {
		if got := modules[a].String(); got != want {
			t.Errorf("the module of %s: %q, want %q", a, got, want)
		}
	}
	for _, k := range kv.Keys(cfg) {
		if imported := k.Import != nil; imported != (k.Consul == "") {
			t.Errorf("the key %s of datacenter %q: imported %v", k.Name, k.Consul, imported)
		}
	}
}
