package plans

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestFingerprintWhenRead: a plan's fingerprint is worked out when it is
// first read, once for the plan and its copies, and written and read
// back as the digest's string.
func TestFingerprintWhenRead(t *testing.T) {
	worked := 0
	info := BackendInfo{Name: "consul", Fingerprint: DigestWhenRead(func() string { worked++; return "sha256:ab" })}
	p := &Plan{Backends: []BackendInfo{info}}
	q := p.Redacted()
	if worked != 0 {
		t.Fatalf("the fingerprint was worked out %d times before it was read", worked)
	}
	b, err := json.Marshal(q.Backends[0])
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Backends[0].Fingerprint.String(); got != "sha256:ab" || worked != 1 {
		t.Fatalf("read twice: %q, worked out %d times; want sha256:ab, once", got, worked)
	}
	var back BackendInfo
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(info, back); diff != "" || back.Fingerprint.String() != "sha256:ab" {
		t.Errorf("read back from %s (-made +read):\n%s", b, diff)
	}
	if s, _ := json.Marshal(BackendInfo{}); string(s) != `{"name":"","kind":"","address":"","fingerprint":""}` {
		t.Errorf("no fingerprint is written %s", s)
	}
	if (Fingerprint{}).Equal(Digested("sha256:ab")) {
		t.Error("no fingerprint equals one")
	}
}
