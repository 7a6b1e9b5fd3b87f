package consul

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/provision-dev/provision/provision/fuzzing"
	"github.com/provision-dev/provision/provision/traefik/labels"
)

// FuzzReadTags reads arbitrary tags back into a frontend. It must never
// panic; a tag is either read back or kept, never lost; and a frontend it
// reads back renders (for the default dialect) into tags that read back
// to the same frontend.
func FuzzReadTags(f *testing.F) {
	f.Add("traefik.enable=true\ntraefik.frontend.rule=Path:/api\ntraefik.frontend.auth.forward.address=http://127.0.0.1:8080/auth\ntraefik.frontend.auth.forward.authResponseHeaders=X-Auth-User")
	f.Add("traefik.enable=true\ntraefik.http.routers.r.rule=(Path(`/a`) || Path(`/b`)) && Host(`x`)\ntraefik.http.routers.r.middlewares=m\ntraefik.http.middlewares.m.forwardauth.address=http://h/auth\nv1")
	f.Fuzz(func(t *testing.T, joined string) {
		fuzzing.Bounded(t, joined, func(t testing.TB) {
			tags := strings.Split(joined, "\n")
			fe, plain, unread := ReadTags("traefik", tags)
			if len(plain)+len(unread) > len(tags) {
				t.Fatalf("more tags kept than given: %q -> %q + %q", tags, plain, unread)
			}
			if fe == nil || fe.Rule == nil {
				return
			}
			if fe.Rule.Check(labels.GrammarCommon) != nil {
				return
			}
			p := Proxy{Dialect: labels.DialectTraefik, Prefix: "traefik"}
			rendered := Tags(p, &Decl{Service: "svc", Frontend: fe})
			again, _, unreadAgain := ReadTags("traefik", rendered)
			if again == nil || !sameFrontend(fe, again) || len(unreadAgain) > 0 {
				t.Fatalf("%q reads back as %+v; rendered %q, which reads back as %+v (unread %q)", tags, fe, rendered, again, unreadAgain)
			}
		})
	})
}

// FuzzCoreJSON: a registration's core, a live service (with other
// fields, JSON as decoded) and its fingerprint's entry are encoded byte
// for byte as json.Marshal encodes them by reflection, whatever their
// strings hold (escapes, <, > and &, invalid UTF-8, U+2028), with no tags
// or meta, or empty ones.
func FuzzCoreJSON(f *testing.F) {
	f.Add("web-1", "web", "traefik.enable=true\ntraefik.http.routers.web.rule=PathPrefix(`/api`)", "127.0.0.1", 8080, "managed-by\nprovision", 0, `{"Weights":{"Passing":10,"Warning":1}}`)
	f.Add("a\"b\\c", "<&>", "\u2028\x00\xff", "", -1, "k\x01\nv\u00e9", 1, `{"TaggedAddresses":{"wan":{"Address":"198.51.100.5","Port":8e-7}}}`)
	f.Add("", "", "", "", 0, "", 2, ``)
	f.Fuzz(func(t *testing.T, id, name, tags, address string, port int, meta string, empty int, fields string) {
		c := core{ID: id, Name: name, Address: address, Port: port}
		switch empty % 3 {
		case 0:
			c.Tags, c.Meta = strings.Split(tags, "\n"), map[string]string{}
			kv := strings.Split(meta, "\n")
			for i := 0; i+1 < len(kv); i += 2 {
				c.Meta[kv[i]] = kv[i+1]
			}
		case 1:
			c.Tags, c.Meta = []string{}, map[string]string{}
		}
		fuzzing.SameJSON(t, "core", c, c.appendJSON(nil))
		s := &agentService{ID: id, Service: name, Tags: c.Tags, Meta: c.Meta, Port: port, Address: address}
		_ = json.Unmarshal([]byte(fields), &s.Fields)
		fuzzing.SameJSON(t, "service", s, s.appendJSON(nil))
		e := fingerprinted{Service: s}
		if empty%3 == 0 {
			e.Checks = map[string]liveCheck{"service:" + id: {Name: name, ServiceID: id, Type: "http", Interval: "10s", Notes: meta}}
		}
		got, err := e.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		fuzzing.SameJSON(t, "fingerprint", struct {
			Service *agentService
			Checks  map[string]liveCheck
		}{e.Service, e.Checks}, got)
	})
}
