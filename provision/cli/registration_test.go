package cli

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/provision/servers"
)

// issue56Registration is the smallest registration that issue 56 saw
// lose its fields: weights, a WAN address set by hand, tag override, and
// a TTL and an HTTP check with a method, a header and a deregister
// timeout (fields of PUT /v1/agent/service/register, as Consul's
// website/content/api-docs/agent/service.mdx lists them).
const issue56Registration = `{
  "ID": "web-1", "Name": "web", "Address": "127.0.0.1", "Port": 8080,
  "EnableTagOverride": true, "Weights": {"Passing": 10, "Warning": 1},
  "TaggedAddresses": {"wan": {"Address": "198.51.100.5", "Port": 80}},
  "Checks": [{"Name": "ttl-check", "CheckID": "web-ttl", "TTL": "30s"},
             {"Name": "http-check", "HTTP": "http://127.0.0.1:8080/health", "Method": "POST",
              "Header": {"X-Probe": ["1"]}, "Interval": "10s", "DeregisterCriticalServiceAfter": "90m"}]}`

// TestTakeOverKeepsTheRegistration takes over issue 56's registration as
// docs/guides/take-over.md says (an import block, then plan
// -generate-config-out, or a block written by hand that declares none of
// its other fields), and applies: the agent's service and its checks must
// be what they were but for the ownership marks, the plan must say what
// it keeps, and the next plan must be empty.
func TestTakeOverKeepsTheRegistration(t *testing.T) {
	for _, c := range []struct {
		name, block string
		says        []string
	}{
		{"generated", "", []string{"the health checks on the agent (service:web-1:2, web-ttl) are kept as they are"}},
		{"by hand", "\nservice \"web\" {\n  id      = \"web-1\"\n  address = \"127.0.0.1\"\n  port    = 8080\n}\n",
			[]string{"kept as they are live, not declared: tagged_addresses, weights, enable_tag_override", "the health checks on the agent (service:web-1:2, web-ttl) are kept as they are"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			agent := servers.NewConsul(t)
			consulDo(t, agent.Addr, "PUT", "/v1/agent/service/register", issue56Registration)
			before := allServices(t, agent.Addr)
			s := newSpecsDir(t, map[string]string{"CONSUL_HTTP_ADDR": agent.Addr, "NO_COLOR": "1"})
			s.write("project = \"probe\"\n\nimport {\n  to = service.web-1\n}\n" + c.block)
			if c.block == "" {
				s.run(exitOK, "plan", "-generate-config-out="+filepath.Join(s.dir, "gen.hcl"))
				gen, _ := os.ReadFile(filepath.Join(s.dir, "gen.hcl"))
				t.Logf("generated:\n%s", gen)
			}
			out, _ := s.run(exitOK, "apply", "-auto-approve")
			for _, want := range c.says {
				if !strings.Contains(out, want) {
					t.Errorf("the take-over does not say %q:\n%s", want, out)
				}
			}
			if d := cmp.Diff(before, allServices(t, agent.Addr)); d != "" {
				t.Errorf("the take-over changed the registration (-before +after):\n%s", d)
			}
			if p := s.plan(); len(changed(p, actionAddr)) > 0 {
				t.Errorf("the plan after the take-over: %q", changed(p, actionAddr))
			}
		})
	}
}

// liveRegistration is what the agent reports of a service (less what
// changes with every registration) and of its checks (by check ID, less
// their output and status, which move as they run).
func liveRegistration(t *testing.T, addr, id string) (map[string]any, map[string]any) {
	t.Helper()
	var svc map[string]any
	if err := json.Unmarshal([]byte(consulDo(t, addr, "GET", "/v1/agent/service/"+id, "")), &svc); err != nil {
		t.Fatal(err)
	}
	delete(svc, "ContentHash")
	var all map[string]map[string]any
	if err := json.Unmarshal([]byte(consulDo(t, addr, "GET", "/v1/agent/checks", "")), &all); err != nil {
		t.Fatal(err)
	}
	checks := map[string]any{}
	for cid, c := range all {
		if c["ServiceID"] == id {
			c = maps.Clone(c)
			delete(c, "Output")
			delete(c, "Status")
			checks[cid] = c
		}
	}
	return svc, checks
}

// corpusEntry is one registration of testdata/consul/corpus.json, as
// Consul's documentation or tests write it (source names the file).
type corpusEntry struct {
	Source       string          `json:"source"`
	Registration json.RawMessage `json:"registration"`
	Expect       string          `json:"expect,omitempty"`
	Why          string          `json:"why,omitempty"`
}

// readCorpus reads the entries of the files of testdata/consul, in order.
func readCorpus(t *testing.T, files ...string) []corpusEntry {
	t.Helper()
	var out []corpusEntry
	for _, f := range files {
		raw, err := os.ReadFile(filepath.Join("../../testdata/consul", f))
		if err != nil {
			t.Fatal(err)
		}
		var es []corpusEntry
		if err := json.Unmarshal(raw, &es); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out = append(out, es...)
	}
	return out
}

// TestTakeOverCorpus takes over registrations transcribed from Consul's
// own documentation and tests (testdata/consul/corpus.json; each entry
// names its file), all on one real Consul 1.15.4 agent with script checks
// enabled: each registered by hand, all taken over as
// docs/guides/take-over.md says, and each service (sidecars included)
// and its checks read back after the apply. Nothing may change but the
// ownership marks, and the next plan must be empty.
func TestTakeOverCorpus(t *testing.T) {
	corpus := readCorpus(t, "corpus.json")
	agent := servers.NewConsul(t, "-hcl=enable_script_checks=true")
	var imports strings.Builder
	imports.WriteString("project = \"corpus\"\n")
	refused := map[string]string{}
	for _, e := range corpus {
		var reg struct{ ID string }
		if err := json.Unmarshal(e.Registration, &reg); err != nil {
			t.Fatal(err)
		}
		code, body := consulCall(t, agent.Addr, "", "PUT", "/v1/agent/service/register", string(e.Registration))
		if code != http.StatusOK {
			refused[reg.ID] = strings.TrimSpace(body)
			if e.Expect != "refused" {
				t.Errorf("%s (%s): the agent refused it: %d %s", reg.ID, e.Source, code, body)
			}
			continue
		}
		if e.Expect == "refused" {
			t.Errorf("%s (%s): the agent took it, expected a refusal (%s)", reg.ID, e.Source, e.Why)
		}
		imports.WriteString("\nimport {\n  to = service." + reg.ID + "\n}\n")
	}
	before := allServices(t, agent.Addr)

	s := newSpecsDir(t, map[string]string{"CONSUL_HTTP_ADDR": agent.Addr, "NO_COLOR": "1"})
	s.write(imports.String())
	code, out, errOut := runCLI(t, s.env, "plan", "-generate-config-out="+filepath.Join(s.dir, "generated.hcl"), s.dir)
	gen, _ := os.ReadFile(filepath.Join(s.dir, "generated.hcl"))
	if code != exitOK {
		rejected, _ := os.ReadFile(filepath.Join(s.dir, "generated.hcl.rejected"))
		t.Fatalf("plan -generate-config-out: exit %d\n%s%s\n%s", code, out, errOut, rejected)
	}
	// A sidecar registration's block (Consul's sidecar-service docs).
	for _, block := range strings.SplitAfter(string(gen), "\n}\n") {
		if strings.Contains(block, `"c45-web"`) {
			t.Logf("generated:%s", block)
		}
		// The proxy's mesh gateway mode, which the agent copies into
		// the upstream that names none, is declared once, at the proxy.
		if strings.Contains(block, `"c61-web-proxy"`) && (strings.Count(block, `"local"`) != 1 || strings.Count(block, `"remote"`) != 1) {
			t.Errorf("the take-over declares what the agent derived:%s", block)
		}
	}
	s.run(exitOK, "apply", "-auto-approve")
	after := allServices(t, agent.Addr)

	var changedIDs []string
	for _, id := range slices.Sorted(maps.Keys(before)) {
		if d := cmp.Diff(before[id], after[id]); d != "" {
			changedIDs = append(changedIDs, id)
			t.Errorf("%s changed in the take-over (-before +after):\n%s", id, d)
		}
	}
	if p := s.plan(); len(changed(p, actionAddr)) > 0 {
		t.Errorf("the plan after the take-over: %q", changed(p, actionAddr))
	}
	accepted := len(corpus) - len(refused)
	t.Logf("corpus: %d entries; %d registered and taken over, with the %d sidecars the agent derived from them; of these %d services, %d unchanged but the marks, %d changed; %d refused by the agent: %v",
		len(corpus), accepted, len(before)-accepted, len(before), len(before)-len(changedIDs), len(changedIDs), len(refused), refused)
}

// allServices is every service on the agent, by ID, with its checks
// (liveRegistration), less provision's marks.
func allServices(t *testing.T, addr string) map[string]any {
	t.Helper()
	var services map[string]any
	if err := json.Unmarshal([]byte(consulDo(t, addr, "GET", "/v1/agent/services", "")), &services); err != nil {
		t.Fatal(err)
	}
	out := map[string]any{}
	for id := range services {
		svc, checks := liveRegistration(t, addr, id)
		meta, _ := svc["Meta"].(map[string]any)
		for k := range meta {
			if strings.HasPrefix(k, "provision-") || k == "managed-by" {
				delete(meta, k)
			}
		}
		// The catalog's virtual IP of a mesh service reaches the agent's
		// view some time after each registration: Consul's, not the
		// registration's.
		if ta, ok := svc["TaggedAddresses"].(map[string]any); ok {
			delete(ta, "consul-virtual")
			if len(ta) == 0 {
				delete(svc, "TaggedAddresses")
			}
		}
		out[id] = map[string]any{"service": svc, "checks": checks}
	}
	return out
}

// fieldsService is a service with the registration's other fields; %s
// is its weights' passing value and %s its tags.
const fieldsService = `project = "fields"

service "web" {
  id      = "web-1"
  address = "127.0.0.1"
  port    = 8080
  tags    = [%s]
  weights = { passing = %s, warning = 1 }
  tagged_addresses = {
    wan = { address = "198.51.100.5", port = 80 }
  }
  enable_tag_override = true
%s
}
`

const fieldsChecks = `
  check "heartbeat" {
    ttl = "30s"
  }
  check "health" {
    http     = "http://127.0.0.1:8080/health"
    method   = "POST"
    header   = { X-Probe = ["1"] }
    interval = "10s"
    deregister_critical_service_after = "90m"
  }`

// TestRegistrationFields follows a service's other fields through their
// life on a real Consul 1.15.4: declared (the plan's request carries
// them), changed in the specs, changed by hand (drift the plan shows and
// pull brings back), kept by an unrelated update, and a check added by
// hand kept while a declared check removed from the specs goes.
func TestRegistrationFields(t *testing.T) {
	agent := servers.NewConsul(t)
	s := newSpecsDir(t, map[string]string{"CONSUL_HTTP_ADDR": agent.Addr, "NO_COLOR": "1"})
	service := func() map[string]any {
		svc, _ := liveRegistration(t, agent.Addr, "web-1")
		return svc
	}
	checkIDs := func() []string {
		_, checks := liveRegistration(t, agent.Addr, "web-1")
		return slices.Sorted(maps.Keys(checks))
	}

	// Declared: the request carries every field, the checks' options too.
	s.write(fmt.Sprintf(fieldsService, `"v1"`, "10", fieldsChecks))
	out, _ := s.run(exitOK, "apply", "-auto-approve")
	for _, want := range []string{`"Weights": {`, `"Passing": 10,`, `"TaggedAddresses": {`, `"EnableTagOverride": true`, `"TTL": "30s"`, `"Method": "POST"`, `"X-Probe": [`, `"DeregisterCriticalServiceAfter": "90m"`} {
		if !strings.Contains(out, want) {
			t.Errorf("the create's request lacks %s:\n%s", want, out)
		}
	}
	if w := service()["Weights"]; !cmp.Equal(w, map[string]any{"Passing": 10.0, "Warning": 1.0}) {
		t.Errorf("weights after the create: %v", w)
	}
	if got := checkIDs(); !slices.Equal(got, []string{"service:web-1:health", "service:web-1:heartbeat"}) {
		t.Errorf("checks after the create: %q", got)
	}

	// Changed in the specs: an update that shows the change.
	s.write(fmt.Sprintf(fieldsService, `"v1"`, "3", fieldsChecks))
	if got := changed(s.plan(), func(c *plans.Change) string { return actionAddr(c) + " " + c.Reason }); !slices.Equal(got, []string{"update service.web-1 weights changed"}) {
		t.Errorf("plan after weights changed in the specs: %q", got)
	}
	s.run(exitOK, "apply", "-auto-approve")
	if w := service()["Weights"].(map[string]any)["Passing"]; w != 3.0 {
		t.Errorf("weights after the update: %v", w)
	}

	// Changed by hand: drift, which pull brings back into the specs.
	live := service()
	live["Weights"] = map[string]any{"Passing": 7, "Warning": 1}
	live["Name"] = live["Service"]
	for _, k := range []string{"Service", "ContentHash", "Datacenter"} {
		delete(live, k)
	}
	b, _ := json.Marshal(live)
	consulDo(t, agent.Addr, "PUT", "/v1/agent/service/register", string(b))
	if got := changed(s.plan(), func(c *plans.Change) string { return actionAddr(c) + " " + c.Reason }); !slices.Equal(got, []string{"update service.web-1 weights changed"}) {
		t.Errorf("plan after weights changed by hand: %q", got)
	}
	s.run(exitOK, "pull")
	spec, _ := os.ReadFile(filepath.Join(s.dir, "main.hcl"))
	if !strings.Contains(string(spec), "passing = 7") {
		t.Errorf("pull did not bring back the live weight:\n%s", spec)
	}
	if got := changed(s.plan(), actionAddr); len(got) > 0 {
		t.Errorf("plan after pull: %q", got)
	}

	// Kept by an unrelated update: a LAN address and a check set by hand
	// stay when the weights change; the declared heartbeat, removed from
	// the specs, goes. (Not the tags: with enable_tag_override the agent's
	// anti-entropy can put the catalog's old tags back over an update's,
	// hashicorp/consul#13578, as this test saw once under CI's load.)
	live = service()
	live["Name"] = live["Service"]
	live["TaggedAddresses"].(map[string]any)["lan"] = map[string]any{"Address": "10.0.0.5", "Port": 8080}
	for _, k := range []string{"Service", "ContentHash", "Datacenter"} {
		delete(live, k)
	}
	b, _ = json.Marshal(live)
	consulDo(t, agent.Addr, "PUT", "/v1/agent/service/register", string(b))
	consulDo(t, agent.Addr, "PUT", "/v1/agent/check/register", `{"ID": "manual", "Name": "manual", "ServiceID": "web-1", "TTL": "60s"}`)
	s.write(fmt.Sprintf(fieldsService, `"v1"`, "5", strings.Replace(fieldsChecks, "check \"heartbeat\" {\n    ttl = \"30s\"\n  }", "", 1)))
	out, _ = s.run(exitOK, "apply", "-auto-approve")
	if !strings.Contains(out, "PUT /v1/agent/check/deregister/service:web-1:heartbeat") || !strings.Contains(out, "kept: the health checks on the agent that provision did not write (manual)") {
		t.Errorf("the update does not say it removes the heartbeat and keeps the manual check:\n%s", out)
	}
	after := service()
	if lan := after["TaggedAddresses"].(map[string]any)["lan"]; !cmp.Equal(lan, map[string]any{"Address": "10.0.0.5", "Port": 8080.0}) || after["EnableTagOverride"] != true {
		t.Errorf("the update reset what it does not declare: %v", after)
	}
	if got := checkIDs(); !slices.Equal(got, []string{"manual", "service:web-1:health"}) {
		t.Errorf("checks after the update: %q", got)
	}
	if got := changed(s.plan(), func(c *plans.Change) string {
		return actionAddr(c) + " " + c.Reason + " " + strings.Join(c.Notes, "; ")
	}); len(got) > 0 {
		t.Errorf("plan after the update: %q", got)
	}

	// A snapshot carries the fields: a plan from it is the live plan.
	snap := filepath.Join(t.TempDir(), "snap.json")
	s.run(exitOK, "snapshot", "-out", snap)
	raw, _ := os.ReadFile(snap)
	for _, want := range []string{`"Weights"`, `"TaggedAddresses"`, `"EnableTagOverride"`} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("the snapshot lacks %s", want)
		}
	}
	s.write(fmt.Sprintf(fieldsService, `"v2"`, "5", strings.Replace(fieldsChecks, "check \"heartbeat\" {\n    ttl = \"30s\"\n  }", "", 1)))
	plansAsLive(t, s.env, s.env, s.dir)
}

// sidecarService declares a service with a sidecar; %s is the sidecar's
// body and %s the service's tags.
const sidecarService = `project = "mesh"

service "web" {
  id   = "web-1"
  port = 8080
  tags = [%s]
%s
}
`

const sidecarBlock = `  connect {
    sidecar_service {
      port = %d
      proxy {
        upstreams = [{ destination_name = "db", local_bind_port = 9191 }]
      }
    }
  }`

// TestSidecarIsItsServices declares a service with connect {
// sidecar_service {} } on a real Consul 1.15.4: the agent registers the
// sidecar with the service, and provision reads, compares, changes and
// deletes it with the service, never as a registration of its own; an
// import of a sidecar is refused.
func TestSidecarIsItsServices(t *testing.T) {
	agent := servers.NewConsul(t)
	s := newSpecsDir(t, map[string]string{"CONSUL_HTTP_ADDR": agent.Addr, "NO_COLOR": "1"})
	sidecarPort := func() any {
		code, body := consulCall(t, agent.Addr, "", "GET", "/v1/agent/service/web-1-sidecar-proxy", "")
		if code != http.StatusOK {
			return code
		}
		var svc map[string]any
		json.Unmarshal([]byte(body), &svc)
		return svc["Port"]
	}
	line := func(c *plans.Change) string { return actionAddr(c) + " " + c.Reason }

	s.write(fmt.Sprintf(sidecarService, `"v1"`, fmt.Sprintf(sidecarBlock, 21500)))
	s.run(exitOK, "apply", "-auto-approve")
	if p := sidecarPort(); p != 21500.0 {
		t.Fatalf("the sidecar after the create: %v", p)
	}
	if got := changed(s.plan(), actionAddr); len(got) > 0 {
		t.Errorf("plan after the create: %q", got)
	}

	s.write(fmt.Sprintf(sidecarService, `"v1"`, fmt.Sprintf(sidecarBlock, 21501)))
	p := s.plan()
	if got := changed(p, line); !slices.Equal(got, []string{"update service.web-1 sidecar_service changed"}) || !strings.Contains(string(p.Changes[0].Requests[0].Body), `"SidecarService"`) {
		t.Errorf("plan after the sidecar's port changed: %q", got)
	}
	s.run(exitOK, "apply", "-auto-approve")
	if p := sidecarPort(); p != 21501.0 {
		t.Errorf("the sidecar after the update: %v", p)
	}

	// An update for another reason leaves the converged sidecar alone.
	s.write(fmt.Sprintf(sidecarService, `"v2"`, fmt.Sprintf(sidecarBlock, 21501)))
	p = s.plan()
	if got := changed(p, line); !slices.Equal(got, []string{"update service.web-1 tags changed"}) || strings.Contains(string(p.Changes[0].Requests[0].Body), `"SidecarService"`) {
		t.Errorf("plan after the tags changed: %q", got)
	}
	s.run(exitOK, "apply", "-auto-approve")
	if p := sidecarPort(); p != 21501.0 {
		t.Errorf("the sidecar after an update of its service's tags: %v", p)
	}

	// Declared no more: deregistered, after the service's registration.
	s.write(fmt.Sprintf(sidecarService, `"v2"`, ""))
	p = s.plan()
	if got := changed(p, line); !slices.Equal(got, []string{"update service.web-1 sidecar_service changed"}) || len(p.Changes[0].Requests) != 2 ||
		p.Changes[0].Requests[1].Path != "/v1/agent/service/deregister/web-1-sidecar-proxy" {
		t.Errorf("plan after the sidecar's removal: %q", got)
	}
	s.run(exitOK, "apply", "-auto-approve")
	if p := sidecarPort(); p != http.StatusNotFound {
		t.Errorf("the sidecar after its removal: %v", p)
	}

	// Deleted with its service: one delete, the service's.
	s.write(fmt.Sprintf(sidecarService, `"v2"`, fmt.Sprintf(sidecarBlock, 21502)))
	s.run(exitOK, "apply", "-auto-approve")
	s.write("project = \"mesh\"\n")
	if got := changed(s.plan(), actionAddr); !slices.Equal(got, []string{"delete service.web-1"}) {
		t.Errorf("plan without the service: %q", got)
	}
	s.run(exitOK, "apply", "-auto-approve")
	if p := sidecarPort(); p != http.StatusNotFound {
		t.Errorf("the sidecar after its service's delete: %v", p)
	}

	// A sidecar is imported with its service, never alone.
	consulDo(t, agent.Addr, "PUT", "/v1/agent/service/register", `{"ID": "api", "Name": "api", "Port": 9000, "Connect": {"SidecarService": {}}}`)
	s.write("project = \"mesh\"\n\nimport {\n  to = service.api-sidecar-proxy\n}\n")
	_, errOut := s.run(exitError, "plan", "-generate-config-out="+filepath.Join(s.dir, "gen.hcl"))
	if !strings.Contains(errOut, "A sidecar proxy is its service's") {
		t.Errorf("an import of a sidecar:\n%s", errOut)
	}
}
