package traefik

import (
	"fmt"
	"strconv"
	"strings"
)

// advisory is a published forwardAuth advisory of Traefik, with the
// first release of each line that fixes it (the advisories' own pages:
// github.com/traefik/traefik/security/advisories).
type advisory struct {
	id, what string
	fixed    map[int][3]int // by major version: the fixed release
}

var advisories = []advisory{
	{"CVE-2026-35051 (GHSA-6384-m2mw-rf54)", "ForwardAuth passes a client's X-Forwarded-Prefix to the auth endpoint", map[int][3]int{2: {2, 11, 43}, 3: {3, 6, 14}}},
	{"CVE-2026-39858 (GHSA-5m6w-wvh7-57vm)", "ForwardAuth passes header aliases with underscores (X_Forwarded_Proto) to the auth endpoint", map[int][3]int{2: {2, 11, 43}, 3: {3, 6, 14}}},
}

// exposure says which advisories a Traefik version is exposed to, with
// the fixed releases; "" when none (or the version cannot be read).
func exposure(version string) string {
	v, ok := parseVersion(version)
	if !ok {
		return ""
	}
	var out []string
	for _, a := range advisories {
		fix, ok := a.fixed[v[0]]
		switch {
		case !ok && v[0] < 2:
			out = append(out, fmt.Sprintf("%s, %s: no %d.x release fixes it (%d.x is past its end of life)", a.id, a.what, v[0], v[0]))
		case ok && less(v, fix):
			out = append(out, fmt.Sprintf("%s, %s: fixed in %d.%d.%d", a.id, a.what, fix[0], fix[1], fix[2]))
		}
	}
	return strings.Join(out, "; ")
}

// parseVersion reads "v1.7.34", "2.11.10" or "3.6.0-rc1".
func parseVersion(s string) ([3]int, bool) {
	var v [3]int
	s, _, _ = strings.Cut(strings.TrimPrefix(s, "v"), "-")
	parts := strings.Split(s, ".")
	if len(parts) != 3 {
		return v, false
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil {
			return v, false
		}
		v[i] = n
	}
	return v, true
}

func less(a, b [3]int) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}
