package consul_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision/consul"
	"github.com/provision-dev/provision/provision/langtest"
	"github.com/provision-dev/provision/schema"
)

// TestConsulDefinitions: the service definitions of Consul's "Define
// services" page (website/content/docs/services/usage/define-services.mdx
// of hashicorp/consul), as written there with a project line added
// (testdata/consul), load and mean what they mean to Consul: a service
// block without a label is the service its name says, services blocks
// are services, checks = [{...}] and check = {...} are its checks.
func TestConsulDefinitions(t *testing.T) {
	load := func(file string) *schema.Config {
		t.Helper()
		cfg, diags := schema.NewParser(langtest.Language).LoadDir("testdata/consul/"+file, schema.Inputs{})
		if diags.HasErrors() {
			t.Fatalf("%s: %s", file, diags)
		}
		return cfg
	}
	describe := func(cfg *schema.Config) string {
		var out []string
		for _, s := range consul.Services(cfg) {
			d := fmt.Sprintf("%s/%s:%d tags=%v meta=%v fields=%v", s.Service, s.Name, s.Port, s.Tags, s.Meta, s.Fields)
			for _, c := range s.Checks {
				d += fmt.Sprintf(" check %q args=%v interval=%v timeout=%v", c.Name, c.Def["Args"], c.Def["Interval"], c.Def["Timeout"])
			}
			out = append(out, d)
		}
		return strings.Join(out, "\n")
	}
	for file, want := range map[string]string{
		"define-service.hcl": `redis/redis:80 tags=[primary] meta=map[custom_meta_key:custom_meta_value] fields=map[TaggedAddresses:map[lan:map[Address:192.168.0.55 Port:8000] wan:map[Address:198.18.0.23 Port:80]]]`,
		"multiple-services.hcl": `redis/red0:6000 tags=[primary] meta=map[] fields=map[] check "check-1" args=[/bin/check_redis -p 6000] interval=5s timeout=20s` + "\n" +
			`redis/red1:7000 tags=[delayed secondary] meta=map[] fields=map[] check "check-1" args=[/bin/check_redis -p 7000] interval=30s timeout=60s`,
		"tag-override.hcl": `redis/redis:6379 tags=[] meta=map[] fields=map[EnableTagOverride:true]`,
	} {
		if got := describe(load(file)); got != want {
			t.Errorf("%s:\n got %s\nwant %s", file, got, want)
		}
	}

	// Near misses name what is wrong, where.
	for src, want := range map[string]string{
		"service {\n  port = 80\n}\n":                                                      "Missing service name at main.hcl:3",
		"service {\n  name = \"a\"\n  checks = { ttl = \"30s\" }\n}\n":                     "Invalid checks at main.hcl:5",
		"service {\n  name = \"a\"\n  check = [{ ttl = \"30s\" }]\n}\n":                    "Invalid check at main.hcl:5",
		"service {\n  name = \"a\"\n  checks = [{ ttl = \"30s\", http_url = \"x\" }]\n}\n": "Unsupported argument at main.hcl:5",
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte("project = \"p\"\n\n"+src), 0o644); err != nil {
			t.Fatal(err)
		}
		_, diags := schema.NewParser(langtest.Language).LoadDir(dir, schema.Inputs{})
		var got []string
		for _, d := range diags.Errs() {
			d := d.(*hcl.Diagnostic)
			got = append(got, fmt.Sprintf("%s at main.hcl:%d", d.Summary, d.Subject.Start.Line))
		}
		if len(got) == 0 || got[0] != want {
			t.Errorf("%q: %v, want %s", src, got, want)
		}
	}
}
