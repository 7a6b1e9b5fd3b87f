package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/provision-dev/provision/provision/servers"
)

// estateRegistration is one registration of the corpus, as a person
// registers it by hand.
type estateRegistration struct {
	ID      string   `json:"ID"`
	Name    string   `json:"Name"`
	Address string   `json:"Address,omitempty"`
	Port    int      `json:"Port,omitempty"`
	Tags    []string `json:"Tags"`
}

// estateCorpus is a hand-made proxy estate of the kinds Traefik's own
// tests of its Consul catalog provider register (pkg/provider/
// consulcatalog/config_test.go, integration/consul_catalog_test.go at
// v2.11 and v3.6): routers named apart from their service, middlewares
// chained by name, several routers per service, TCP and UDP routers,
// services with load-balancer options, TLS options, registrations
// without a port, instances of one name with the same routers and with
// different ones, Traefik 1 tags, a lone traefik.enable=true, tags for
// other readers, and tags as provision's own frontend block writes them.
func estateCorpus() []estateRegistration {
	var out []estateRegistration
	add := func(name string, port int, tags ...string) {
		out = append(out, estateRegistration{ID: fmt.Sprintf("%s-%d", name, len(out)), Name: name, Address: "127.0.0.1", Port: port, Tags: tags})
	}
	rules := []string{"Host(`%s.example.com`)", "PathPrefix(`/%s`)", "Host(`%s.example.com`) && PathPrefix(`/api`)", "Path(`/%s/health`)", "Method(`GET`) && Path(`/%s`)"}
	for i := range 110 {
		name := fmt.Sprintf("est%d", i)
		rule := fmt.Sprintf(rules[i%len(rules)], name)
		port := 19000 + i
		switch i % 11 {
		case 0: // a router named apart from its service
			add(name, port, "traefik.enable=true", "traefik.http.routers.Router"+name+".rule="+rule)
		case 1: // middlewares chained by name
			add(name, port, "traefik.enable=true", "traefik.http.routers.r"+name+".rule="+rule, "traefik.http.routers.r"+name+".middlewares=strip"+name+",hdr"+name,
				"traefik.http.middlewares.strip"+name+".stripprefix.prefixes=/api", "traefik.http.middlewares.hdr"+name+".headers.customrequestheaders.X-Estate="+name)
		case 2: // two routers of one service
			add(name, port, "traefik.enable=true", "traefik.http.routers.a"+name+".rule=Host(`a."+name+".example.com`)",
				"traefik.http.routers.b"+name+".rule=Host(`b."+name+".example.com`)", "traefik.http.routers.b"+name+".priority=42")
		case 3: // TCP and UDP routers
			add(name, port, "traefik.enable=true", "traefik.tcp.routers.t"+name+".rule=HostSNI(`*`)", "traefik.tcp.routers.t"+name+".entrypoints=web",
				"traefik.udp.routers.u"+name+".entrypoints=web", "traefik.udp.services.u"+name+".loadbalancer.server.port=53")
		case 4: // a service with load-balancer options
			add(name, port, "traefik.enable=true", "traefik.http.routers."+name+".rule="+rule, "traefik.http.routers."+name+".service=s"+name,
				"traefik.http.services.s"+name+".loadbalancer.server.port=8080", "traefik.http.services.s"+name+".loadbalancer.passhostheader=false",
				"traefik.http.services.s"+name+".loadbalancer.sticky.cookie.name=c"+name)
		case 5: // TLS options
			add(name, port, "traefik.enable=true", "traefik.http.routers.tls"+name+".rule="+rule, "traefik.http.routers.tls"+name+".tls=true",
				"traefik.http.routers.tls"+name+".tls.options=default")
		case 6: // no port
			add(name, 0, "traefik.enable=true", "traefik.http.routers."+name+".rule="+rule)
		case 7: // instances of one name, same routers
			for j := range 2 {
				add(name, port+1000*j, "traefik.enable=true", "traefik.http.routers.inst"+name+".rule="+rule)
			}
		case 8: // instances of one name, different routers
			add(name, port, "traefik.enable=true", "traefik.http.routers.one"+name+".rule=Host(`one."+name+".example.com`)")
			add(name, port+1000, "traefik.enable=true", "traefik.http.routers.two"+name+".rule=Host(`two."+name+".example.com`)")
		case 9: // Traefik 1 tags, and tags for other readers
			add(name, port, "traefik.enable=true", "traefik.frontend.rule=PathPrefix:/"+name, "v1", "team="+name)
		case 10: // as provision's frontend block writes them, or a lone enable
			if i%2 == 0 {
				add(name, port, "traefik.enable=true")
				continue
			}
			add(name, port, "traefik.enable=true", "traefik.frontend.rule=PathPrefix:/"+name,
				"traefik.http.routers."+name+".rule=PathPrefix(`/"+name+"`)")
		}
	}
	return out
}

// TestTakeOverEstate takes over a hand-made proxy estate of more than 100
// registrations (estateCorpus), read by a real Traefik 3.6, 2.11 and 1.7
// from a real Consul 1.15.4: one import block per ID, plan
// -generate-config-out, apply, and the plan after. What each Traefik
// serves (its API's routers, services and middlewares of every protocol)
// and every registration's tags must be what they were, and the plan
// after the apply empty.
func TestTakeOverEstate(t *testing.T) {
	agent := servers.NewConsul(t)
	proxies := map[string]*servers.Traefik{
		"traefik 3.6":  servers.NewTraefik(t, agent.Addr, servers.TraefikOptions{Generation: 3}),
		"traefik 2.11": servers.NewTraefik(t, agent.Addr, servers.TraefikOptions{Generation: 2}),
		"traefik 1.7":  servers.NewTraefik(t, agent.Addr, servers.TraefikOptions{Generation: 1}),
	}
	corpus := estateCorpus()
	for _, r := range corpus {
		b, _ := json.Marshal(r)
		consulDo(t, agent.Addr, "PUT", "/v1/agent/service/register", string(b))
	}
	before := map[string]any{}
	for name, p := range proxies {
		before[name] = served(t, p)
	}

	dir := t.TempDir()
	var spec strings.Builder
	spec.WriteString("project = \"estate\"\n")
	for _, r := range corpus {
		fmt.Fprintf(&spec, "\nimport {\n  to = service.%s\n}\n", r.ID)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(spec.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"CONSUL_HTTP_ADDR": agent.Addr, "NO_COLOR": "1"}
	generated := filepath.Join(dir, "generated.hcl")
	if code, out, errOut := runCLI(t, env, "plan", "-generate-config-out", generated, dir); code != exitOK {
		t.Fatalf("plan -generate-config-out: exit %d\n%s%s", code, tail(out, 4000), errOut)
	}
	hcl, _ := os.ReadFile(generated)
	// Three representative blocks: middlewares chained by name (tags as
	// written), two instances with the same router (for_each), and tags
	// as a frontend block writes them (the block).
	for _, label := range []string{`service "est1"`, `service "est7"`, `service "est21"`} {
		block := blockOf(string(hcl), label)
		t.Logf("generated:\n%s", block)
		if label == `service "est7"` && !strings.Contains(block, "for_each") || label == `service "est21"` && !strings.Contains(block, "frontend {") {
			t.Errorf("generated %s is not in the form expected", label)
		}
	}
	code, out, errOut := runCLI(t, env, "apply", "-auto-approve", dir)
	if code != exitOK {
		t.Fatalf("apply: exit %d\n%s%s", code, tail(out, 4000), errOut)
	}
	imported := strings.Count(out, ": PUT /v1/agent/service/register: ok")
	code, out, errOut = runCLI(t, env, "plan", "-detailed-exitcode", dir)
	converged := code == exitOK
	if !converged {
		t.Errorf("the plan after the take-over: exit %d\n%s%s", code, tail(out, 4000), errOut)
	}
	sameTags := 0
	for _, r := range corpus {
		var live struct {
			Tags []string
			Port int
		}
		if err := json.Unmarshal([]byte(consulDo(t, agent.Addr, "GET", "/v1/agent/service/"+r.ID, "")), &live); err != nil {
			t.Fatal(err)
		}
		if slices.Equal(live.Tags, r.Tags) && live.Port == r.Port {
			sameTags++
		} else {
			t.Errorf("%s: tags %q, port %d after the take-over; were %q, %d", r.ID, live.Tags, live.Port, r.Tags, r.Port)
		}
	}
	unchanged := map[string]bool{}
	for name, p := range proxies {
		after := served(t, p)
		diff := cmp.Diff(before[name], after)
		if unchanged[name] = diff == ""; !unchanged[name] {
			t.Errorf("%s serves other objects after the take-over (-before +after):\n%.6000s", name, diff)
		}
	}
	t.Logf("corpus of %d hand-made registrations: %d taken over, tags and port unchanged %d, converged %t, proxies unchanged %v",
		len(corpus), imported, sameTags, converged, unchanged)
	if imported != len(corpus) {
		t.Errorf("%d of %d registrations imported", imported, len(corpus))
	}
}

// served is what a Traefik serves from the Consul catalog, once it stops
// changing: for Traefik 2 and 3 the routers, services and middlewares of
// every protocol its API lists (less the servers' health, which moves on
// its own), for Traefik 1 its providers.
func served(t *testing.T, p *servers.Traefik) any {
	t.Helper()
	read := func() any {
		get := func(path string) any {
			resp, err := http.Get(p.API + path)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusOK {
				return resp.Status
			}
			var v any
			if err := json.Unmarshal(b, &v); err != nil {
				t.Fatalf("%s%s: %v", p.API, path, err)
			}
			return v
		}
		if v, ok := get("/api/providers").(map[string]any); ok {
			return v // Traefik 1.7
		}
		out := map[string]any{}
		for _, proto := range []string{"http", "tcp", "udp"} {
			for _, kind := range []string{"routers", "services", "middlewares"} {
				if proto == "udp" && kind == "middlewares" {
					continue
				}
				list, _ := get("/api/" + proto + "/" + kind + "?per_page=1000").([]any)
				var kept []any
				for _, o := range list {
					m, _ := o.(map[string]any)
					if m["provider"] != "consulcatalog" {
						continue
					}
					delete(m, "serverStatus")
					kept = append(kept, m)
				}
				out[proto+" "+kind] = kept
			}
		}
		return out
	}
	// Traefik refreshes the catalog every second: what it serves is read
	// until four reads a refresh and a half apart agree.
	last, same := read(), 0
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); {
		time.Sleep(1500 * time.Millisecond)
		now := read()
		if same++; !reflect.DeepEqual(last, now) {
			same = 0
		}
		if same == 3 && serves(now) {
			return now
		}
		last = now
	}
	t.Fatalf("%s did not settle in 60s", p.API)
	return nil
}

// blockOf is the generated block that starts with label, to its closing
// brace at the start of a line.
// serves reports whether what a Traefik serves holds the catalog's
// routers yet (an empty read may be one made before its first refresh).
func serves(v any) bool {
	m, _ := v.(map[string]any)
	if routers, ok := m["http routers"].([]any); ok {
		return len(routers) > 0
	}
	return m["consul_catalog"] != nil
}

func blockOf(hcl, label string) string {
	i := strings.Index(hcl, label+" {")
	if i < 0 {
		return ""
	}
	end := strings.Index(hcl[i:], "\n}\n")
	if end < 0 {
		return hcl[i:]
	}
	return hcl[i : i+end+2]
}
