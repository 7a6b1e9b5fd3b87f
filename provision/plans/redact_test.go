package plans

import (
	"encoding/json"
	"strings"
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

// TestRedactedVariables: a plan's variable whose value holds a secret is
// left out of what is written and shown; the others stay as they are.
func TestRedactedVariables(t *testing.T) {
	p := &Plan{Secrets: []string{"hunter2"}, Variables: map[string]Variable{
		"dsn":  {Value: json.RawMessage(`"postgres://u:hunter2@db"`)},
		"port": {Value: json.RawMessage(`8080`)},
		"tags": {Value: json.RawMessage(`{"b":1,"a":[1,2]}`)},
		"key":  {Sensitive: true, Digest: "argon2id:00:11"},
	}}
	got := p.Redacted().Variables
	if _, ok := got["dsn"]; ok || len(got) != 3 || string(got["tags"].Value) != `{"b":1,"a":[1,2]}` || got["key"].Digest == "" {
		t.Errorf("redacted variables: %v", got)
	}
}

// TestRedactBase64: a secret sent base64-encoded (a Consul KV value in a
// transaction) is hidden as the plain one is; another base64 value stays.
func TestRedactBase64(t *testing.T) {
	red := Redactor([]string{"hunter2secret"})
	body := json.RawMessage(`[{"KV":{"Verb":"cas","Key":"apps/token","Value":"aHVudGVyMnNlY3JldA=="}},{"KV":{"Verb":"set","Key":"apps/other","Value":"e30="}}]`)
	got := string(red(body))
	if strings.Contains(got, "aHVudGVy") || !strings.Contains(got, `"Value":"(sensitive)"`) || !strings.Contains(got, `"Value":"e30="`) {
		t.Errorf("redacted: %s", got)
	}
}
