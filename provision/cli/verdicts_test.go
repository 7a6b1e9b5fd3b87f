package cli

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/provision-dev/provision/provision/consul"
	"github.com/provision-dev/provision/provision/servers"
	"github.com/provision-dev/provision/schema"
	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"
)

// TestRegistrationVerdicts: every registration of Consul's own tests and
// docs (testdata/consul/corpus.json) and the refusals and edge cases of
// testdata/consul/verdicts.json, each written as a service block the way
// docs/language/service.md says a Consul definition is written, is judged
// by provision validate and by a real Consul 1.15.4 agent (script checks
// on): the two verdicts must be the same. The agent's verdict is read
// here, never written down; an entry provision refuses on purpose
// ("expect": "provision refuses") must be refused with its reason.
func TestRegistrationVerdicts(t *testing.T) {
	entries := readCorpus(t, "corpus.json", "verdicts.json")
	agent := servers.NewConsul(t, "-hcl=enable_script_checks=true")
	alike := 0
	for _, e := range entries {
		var reg map[string]any
		if err := json.Unmarshal(e.Registration, &reg); err != nil {
			t.Fatal(err)
		}
		id, _ := reg["ID"].(string)
		block := serviceBlockOf(t, reg)
		code, body := consulCall(t, agent.Addr, "", "PUT", "/v1/agent/service/register", string(e.Registration))
		takes := code == http.StatusOK
		if takes {
			consulCall(t, agent.Addr, "", "PUT", "/v1/agent/service/deregister/"+url.PathEscape(id), "")
		}
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte("project = \"verdicts\"\n\n"+block), 0o644); err != nil {
			t.Fatal(err)
		}
		vcode, out, errOut := runCLI(t, map[string]string{"NO_COLOR": "1"}, "validate", dir)
		validates := vcode == exitOK
		switch {
		case e.Expect == "provision refuses":
			if !takes || validates || !strings.Contains(errOut, e.Why) {
				t.Errorf("%s (%s): the agent takes it (%v) and provision must refuse it saying %q:\n%s%s", id, e.Source, takes, e.Why, out, errOut)
			}
		case takes != validates:
			t.Errorf("%s (%s): the agent answers %d %s; provision validate exits %d:\n%s\n%s%s", id, e.Source, code, strings.TrimSpace(body), vcode, block, out, errOut)
		default:
			alike++
		}
	}
	t.Logf("%d registrations: %d judged alike by the agent and validate", len(entries), alike)
}

// serviceBlockOf writes a registration (PUT /v1/agent/service/register's
// JSON) as a service block, as docs/language/service.md says: the name
// its label, each field by its snake_case name, each check a check block
// (labelled by its name), a sidecar's checks its checks list. A key
// provision does not know is written in snake_case all the same, so that
// validate judges it; a check's ServiceID, which a check in a service
// definition cannot set otherwise, is left out.
func serviceBlockOf(t *testing.T, reg map[string]any) string {
	t.Helper()
	f := hclwrite.NewEmptyFile()
	name, _ := reg["Name"].(string)
	body := f.Body().AppendNewBlock("service", []string{name}).Body()
	var checks []any
	for _, k := range slices.Sorted(maps.Keys(reg)) {
		v := reg[k]
		switch k {
		case "Name":
		case "ID", "Address", "Port", "Tags", "Meta", "Token":
			body.SetAttributeValue(snake(k), specOf(schema.Arg{Type: schema.Any}, v))
		case "Check":
			checks = append(checks, v)
		case "Checks":
			checks = append(checks, v.([]any)...)
		default:
			a, ok := schema.ArgWired(consul.RegistrationFields, k)
			if !ok {
				a = schema.Arg{Name: snake(k), Type: schema.Any}
			}
			body.SetAttributeValue(a.Name, specOf(a, v))
		}
	}
	for i, c := range checks {
		def, _ := c.(map[string]any)
		label, _ := def["Name"].(string)
		if label == "" {
			label = fmt.Sprintf("check-%d", i+1)
		}
		cb := body.AppendNewBlock("check", []string{label}).Body()
		for _, k := range slices.Sorted(maps.Keys(def)) {
			if k == "Name" || k == "ServiceID" {
				continue
			}
			a, ok := schema.ArgWired(consul.CheckFields, k)
			if !ok {
				a = schema.Arg{Name: snake(k), Type: schema.Any}
			}
			cb.SetAttributeValue(a.Name, specOf(a, def[k]))
		}
	}
	return string(hclwrite.Format(f.Bytes()))
}

// specOf is v, a value of a on the wire, as a spec writes it: an
// object's keys by their names in a spec, snake_case when a does not know
// them (so that validate sees them), maps' keys as they are.
func specOf(a schema.Arg, v any) cty.Value {
	switch a.Type {
	case schema.Object:
		if m, ok := v.(map[string]any); ok {
			attrs := map[string]cty.Value{}
			for k, x := range m {
				sub, ok := schema.ArgWired(a.Args, k)
				if !ok {
					sub = schema.Arg{Name: snake(k), Type: schema.Any}
				}
				attrs[sub.Name] = specOf(sub, x)
			}
			return cty.ObjectVal(attrs)
		}
	case schema.Objects:
		if l, ok := v.([]any); ok {
			vals := make([]cty.Value, len(l))
			for i, x := range l {
				vals[i] = specOf(schema.Arg{Type: schema.Object, Args: a.Args}, x)
			}
			return cty.TupleVal(vals)
		}
	case schema.ObjectMap:
		if m, ok := v.(map[string]any); ok {
			attrs := map[string]cty.Value{}
			for k, x := range m {
				attrs[k] = specOf(schema.Arg{Type: schema.Object, Args: a.Args}, x)
			}
			return cty.ObjectVal(attrs)
		}
	}
	b, _ := json.Marshal(v)
	ty, err := ctyjson.ImpliedType(b)
	if err != nil {
		return cty.NullVal(cty.DynamicPseudoType)
	}
	out, _ := ctyjson.Unmarshal(b, ty)
	return out
}

// snake is a JSON key in snake_case: DestinationServiceName is
// destination_service_name, script_args stays as it is.
func snake(k string) string {
	var b strings.Builder
	for i, r := range k {
		if unicode.IsUpper(r) && i > 0 && (unicode.IsLower(rune(k[i-1])) || i+1 < len(k) && unicode.IsLower(rune(k[i+1]))) {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// TestCorpusConverges: every registration of the corpora that the agent
// and validate take, declared greenfield as a service block, is applied
// to a real Consul 1.15.4 agent and then plans no change; and provision
// test, which applies the plan in memory and plans again, says the same:
// the two verdicts agree.
func TestCorpusConverges(t *testing.T) {
	var specs strings.Builder
	specs.WriteString("project = \"corpus\"\n\n")
	for _, e := range readCorpus(t, "corpus.json", "verdicts.json") {
		if e.Expect != "" {
			continue // refused by the agent or by provision
		}
		var reg map[string]any
		if err := json.Unmarshal(e.Registration, &reg); err != nil {
			t.Fatal(err)
		}
		specs.WriteString(serviceBlockOf(t, reg) + "\n")
	}
	agent := servers.NewConsul(t, "-hcl=enable_script_checks=true")
	s := newSpecsDir(t, map[string]string{"CONSUL_HTTP_ADDR": agent.Addr, "NO_COLOR": "1"})
	s.write(specs.String())
	os.MkdirAll(filepath.Join(s.dir, "tests"), 0o755)
	os.WriteFile(filepath.Join(s.dir, "tests", "converges.provtest.hcl"), []byte("run \"greenfield\" {}\n"), 0o644)
	_, _, _ = runCLI(t, s.env, "test", "-update", s.dir) // the golden files; the verdict is the next run's
	code, out, errOut := runCLI(t, s.env, "test", s.dir)
	inMemory := code == exitOK
	s.run(exitOK, "apply", "-auto-approve")
	p := s.plan()
	left := changed(p, actionAddr)
	if !inMemory || len(left) > 0 {
		t.Errorf("provision test (in memory) passes: %v; after a real apply the plan changes %q\n%s%s", inMemory, left, out, errOut)
	}
}
