package plans

import (
	"testing"
)

// TestSensitiveWordsCoverTheKeys checks that the cheap scan before the
// redaction finds every key the redaction hides, in any case.
func TestSensitiveWordsCoverTheKeys(t *testing.T) {
	for _, key := range []string{"token", "X-Auth-Token", "SECRET", "client_secret", "password", "Passwd", "api_key", "API-Key", "apikey",
		"credentials", "Authorization", "ConsulToken"} {
		if !sensitiveKey.MatchString(key) {
			t.Fatalf("%q is not a sensitive key", key)
		}
		raw := []byte(`{"a":{"` + key + `":"v"}}`)
		if !mayNameSensitiveKey(raw) {
			t.Errorf("the scan misses the key %q", key)
		}
	}
	if mayNameSensitiveKey([]byte(`{"ID":"api","Tags":["traefik.enable=true"],"Port":8080}`)) {
		t.Error("the scan takes a plain registration for a sensitive one")
	}
	if !mayNameSensitiveKey([]byte(`{"\u0074oken":"v"}`)) {
		t.Error("the scan misses an escaped key")
	}
}
