package traefik

import (
	"strings"
	"testing"
)

// TestExposure: the advisories said for the versions the tests run and
// for the fixed releases.
func TestExposure(t *testing.T) {
	for version, want := range map[string][]string{
		"v1.7.34": {"CVE-2026-35051", "no 1.x release fixes it"},
		"2.11.10": {"CVE-2026-35051", "fixed in 2.11.43", "CVE-2026-39858"},
		"2.11.43": nil,
		"3.6.0":   {"fixed in 3.6.14"},
		"3.5.2":   {"fixed in 3.6.14"},
		"3.6.14":  nil,
		"garbled": nil,
	} {
		got := exposure(version)
		if (got == "") != (want == nil) {
			t.Errorf("%s: %q, want %q", version, got, want)
		}
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: %q lacks %q", version, got, w)
			}
		}
	}
}
