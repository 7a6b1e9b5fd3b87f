package consul

import (
	"strings"
	"testing"

	"github.com/provision-dev/provision/provision/fuzzing"
	"github.com/provision-dev/provision/schema"
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
			if fe.Rule.Check(schema.GrammarCommon) != nil {
				return
			}
			p := schema.Proxy{Dialect: schema.DialectTraefik, Prefix: "traefik"}
			rendered := Tags(p, &Decl{Service: "svc", Frontend: fe})
			again, _, unreadAgain := ReadTags("traefik", rendered)
			if again == nil || !sameFrontend(fe, again) || len(unreadAgain) > 0 {
				t.Fatalf("%q reads back as %+v; rendered %q, which reads back as %+v (unread %q)", tags, fe, rendered, again, unreadAgain)
			}
		})
	})
}
