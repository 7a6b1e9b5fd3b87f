package schema_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision/consul"
	"github.com/provision-dev/provision/provision/langtest"
	"github.com/provision-dev/provision/provision/search"
	"github.com/provision-dev/provision/schema"
)

// teamModule declares a team's visualization and outputs its id, and its
// service's.
var teamModule = map[string]string{"modules/team/main.hcl": `variable "name" {
  type = string
}

variable "port" {
  type = number
}

service "api" {
  id   = "${var.name}-api"
  port = var.port
}

document "visualization" "rate" {
  id     = "${var.name}-rate"
  source = { title = "Rate of ${var.name}", version = 1, visState = { title = "Rate", type = "line", params = {}, aggs = [] } }
}

output "rate_id" {
  value = document.visualization.rate.id
}

output "service_id" {
  value = "${var.name}-api"
}
`}

// outputsRoot is the root specs of the outputs tests: the seed's index
// and a team module called for orders and billing, then body.
func outputsRoot(body string) map[string]string {
	files := map[string]string{"main.hcl": `project = "mods"

search "t1" {
  url          = "http://127.0.0.1:9200"
  cluster_name = "t1"
}

index ".dashboard" {
  search = "t1"
  mapping "visualization" {
    properties = { title = "string", visState = "string", version = "integer" }
  }
  mapping "dashboard" {
    properties = { title = "string", panelsJSON = "string", version = "integer" }
  }
}

module "team" {
  for_each = { orders = 18081, billing = 18082 }
  source   = "./modules/team"
  name     = each.key
  port     = each.value
}
` + body}
	for k, v := range teamModule {
		files[k] = v
	}
	return files
}

// TestModuleOutputsInTheCaller: a module's outputs are values anywhere in
// the calling specs: a document's source (which then needs the documents
// they name, as a direct reference would), a local, another call's inputs
// and for_each, an object's for_each.
func TestModuleOutputsInTheCaller(t *testing.T) {
	root := writeTree(t, outputsRoot(`
document "dashboard" "teams" {
  source = {
    title      = "Teams"
    version    = 1
    panelsJSON = [for k, m in module.team : { id = m.rate_id, type = "visualization", panelIndex = 1 }]
  }
}

locals {
  services = sort([for m in module.team : m.service_id])
}

module "watcher" {
  for_each = toset(local.services)
  source   = "./modules/team"
  name     = "watch-${each.key}"
  port     = 19000 + length(each.key)
}

service "front" {
  for_each = module.watcher
  id       = "front-${each.value.service_id}"
  port     = 8000
  meta     = { rate = module.team["orders"].rate_id }
}
`))
	cfg, diags := schema.NewParser(langtest.Language).LoadDir(root, schema.Inputs{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	var needs []string
	for _, d := range search.Documents(cfg) {
		if d.ID == "teams" {
			for _, n := range d.Needs {
				needs = append(needs, n.Path())
			}
		}
	}
	slices.Sort(needs)
	if diff := cmp.Diff([]string{".dashboard/visualization/billing-rate", ".dashboard/visualization/orders-rate"}, needs); diff != "" {
		t.Errorf("the dashboard named through the module's outputs does not need the visualizations (-want +got):\n%s", diff)
	}
	var services []string
	for _, s := range consul.Services(cfg) {
		services = append(services, s.Name+" "+s.Meta["rate"])
	}
	slices.Sort(services)
	want := []string{"billing-api ", "front-watch-billing-api-api orders-rate", "front-watch-orders-api-api orders-rate", "orders-api ", "watch-billing-api-api ", "watch-orders-api-api "}
	if diff := cmp.Diff(want, services); diff != "" {
		t.Errorf("services (-want +got):\n%s", diff)
	}
}

// TestModuleOutputsBad: a call that is not there, an output a module does
// not have, and a loop through modules are each one error at its range.
func TestModuleOutputsBad(t *testing.T) {
	for name, tt := range map[string]struct{ body, want, detail string }{
		"a module not called": {`
output "x" {
  value = module.teams["orders"].rate_id
}
`, "Reference to undeclared module at main.hcl:26", `No module "teams" {} block is called here`},
		"an output the module lacks": {`
output "x" {
  value = module.team["orders"].rates
}
`, "Unsupported module output at main.hcl:26", `The module "team" has no output "rates". Its outputs are: rate_id, service_id.`},
		"a call's input from its own output": {`
module "self" {
  source = "./modules/team"
  name   = module.self.rate_id
  port   = 1
}
`, "Cycle through modules at main.hcl:25", "module.self → module.self"},
		"a loop through a local and another call": {`
locals {
  name = module.b.service_id
}

module "a" {
  source = "./modules/team"
  name   = local.name
  port   = 1
}

module "b" {
  source = "./modules/team"
  name   = module.a.rate_id
  port   = 2
}
`, "Cycle through modules at main.hcl:35", "local.name → module.b → module.a → local.name"},
	} {
		t.Run(name, func(t *testing.T) {
			root := writeTree(t, outputsRoot(tt.body))
			_, diags := schema.NewParser(langtest.Language).LoadDir(root, schema.Inputs{})
			var got []string
			var details []string
			for _, d := range diags.Errs() {
				d := d.(*hcl.Diagnostic)
				rel, _ := filepath.Rel(root, d.Subject.Filename)
				got = append(got, fmt.Sprintf("%s at %s:%d", d.Summary, filepath.ToSlash(rel), d.Subject.Start.Line))
				details = append(details, d.Detail)
			}
			if !slices.Contains(got, tt.want) || !strings.Contains(strings.Join(details, "\n"), tt.detail) {
				t.Errorf("diagnostics %q, want %q with %q:\n%s", got, tt.want, tt.detail, strings.Join(details, "\n"))
			}
		})
	}
}
