package consul

import (
	"maps"
	"testing"

	"github.com/provision-dev/provision/provision/adapter"
)

// TestRouterName: a name of safe bytes is its own router name; any other
// is the expression's, one "-" a character.
func TestRouterName(t *testing.T) {
	for name, want := range map[string]string{
		"svc-0_A9": "svc-0_A9", "api.v2": "api-v2", "a b/c": "a-b-c", "café": "caf-", "": "", "日本": "--",
	} {
		if got := routerName(name); got != want || got != routerUnsafe.ReplaceAllString(name, "-") {
			t.Errorf("routerName(%q) = %q, want %q", name, got, want)
		}
	}
}

// TestSameMeta: meta that differs only in the checks' digest, their IDs or
// the protection is the same; any other key or value is a change.
func TestSameMeta(t *testing.T) {
	base := map[string]string{"managed-by": "provision", "team": "a"}
	with := func(k, v string) map[string]string { m := maps.Clone(base); m[k] = v; return m }
	for _, c := range []struct {
		a, b map[string]string
		same bool
	}{
		{base, maps.Clone(base), true},
		{base, with(checksKey, "x"), true},
		{with(checkIDsKey, "a,b"), with(adapter.ProtectedKey, "true"), true},
		{nil, map[string]string{}, true},
		{nil, map[string]string{checksKey: "x"}, true},
		{base, with("team", "b"), false},
		{base, with("owner", "b"), false},
		{with("owner", ""), base, false},
		{nil, base, false},
	} {
		if got := sameMeta(c.a, c.b); got != c.same || sameMeta(c.b, c.a) != c.same {
			t.Errorf("sameMeta(%v, %v) = %t, want %t both ways", c.a, c.b, got, c.same)
		}
	}
}
