package provision

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestAddrRoundTrip(t *testing.T) {
	for _, tt := range []struct {
		addr Addr
		text string
	}{
		{Addr{Kind: "service", Name: "gated-api-1"}, "service.gated-api-1"},
		{Addr{Kind: "index", Name: ".dashboard"}, `index[".dashboard"]`},
		{Addr{Kind: "index", Name: "logs"}, "index.logs"},
		{Addr{In: "agent.node-a", Kind: "service", Name: "gated-api-1"}, "agent.node-a.service.gated-api-1"},
		{Addr{In: "search.t2", Kind: "index", Name: ".dashboard"}, `search.t2.index[".dashboard"]`},
		{Addr{In: "search.t1", Kind: "index", Name: "logs.2026"}, `search.t1.index["logs.2026"]`},
		{Addr{Kind: "document", Name: ".dashboard/index-pattern/logs-*"}, `document[".dashboard/index-pattern/logs-*"]`},
		{Addr{In: "search.t2", Kind: "document", Name: ".dashboard/search/errors"}, `search.t2.document[".dashboard/search/errors"]`},
	} {
		if got := tt.addr.String(); got != tt.text {
			t.Errorf("%v.String() = %q, want %q", tt.addr, got, tt.text)
		}
		back, err := ParseAddr(tt.text)
		if err != nil || back != tt.addr {
			t.Errorf("ParseAddr(%q) = %v, %v", tt.text, back, err)
		}
	}
	// A user may also write the dotted form of a dotted name.
	if a, err := ParseAddr("index..dashboard"); err != nil || a != (Addr{Kind: "index", Name: ".dashboard"}) {
		t.Errorf("ParseAddr(index..dashboard) = %v, %v", a, err)
	}
	for _, bad := range []string{"", "service", "cluster.x", `index[".dashboard"`, "service."} {
		if _, err := ParseAddr(bad); err == nil {
			t.Errorf("ParseAddr(%q) accepted", bad)
		}
	}
}

func testPlan(n, bodySize int) *Plan {
	p := &Plan{FormatVersion: FormatVersion, Project: "edge"}
	for i := range n {
		body, _ := json.Marshal(map[string]string{"ID": fmt.Sprintf("svc-%04d", i), "pad": strings.Repeat("x", bodySize)})
		p.Changes = append(p.Changes, &Change{
			Addr:     Addr{Kind: "service", Name: fmt.Sprintf("svc-%04d", i)},
			Action:   Create,
			After:    body,
			Requests: []Request{{Method: "PUT", Path: "/v1/agent/service/register", Body: body}},
		})
	}
	p.sort()
	return p
}

func TestTarget(t *testing.T) {
	p := testPlan(3, 1)
	if err := p.Target([]Addr{{Kind: "service", Name: "svc-0001"}, {Kind: "service", Name: "svc-0002"}}, []Addr{{Kind: "service", Name: "svc-0002"}}); err != nil {
		t.Fatal(err)
	}
	if len(p.Changes) != 1 || p.Changes[0].Addr.Name != "svc-0001" || p.Summary.Create != 1 {
		t.Errorf("targeted plan: %+v", p.Summary)
	}
	if err := testPlan(3, 1).Target([]Addr{{Kind: "service", Name: "svc-9"}}, nil); err == nil || !strings.Contains(err.Error(), "service.svc-9 matches no object") {
		t.Errorf("an unknown target: %v", err)
	}
}

// TestMarkdownParts splits a large plan into parts under the limit that
// together hold every change once.
func TestMarkdownParts(t *testing.T) {
	parts := RenderMarkdown(testPlan(60, 3000))
	if len(parts) < 2 {
		t.Fatalf("%d parts for a large plan", len(parts))
	}
	seen := 0
	for i, part := range parts {
		if len(part) >= MarkdownLimit {
			t.Errorf("part %d is %d characters", i+1, len(part))
		}
		if !strings.HasPrefix(part, fmt.Sprintf("<!-- provision plan, part %d of %d -->\n", i+1, len(parts))) {
			t.Errorf("part %d has no part header", i+1)
		}
		seen += strings.Count(part, "<details>")
	}
	if seen != 60 {
		t.Errorf("the parts hold %d changes, want 60", seen)
	}
	if parts := RenderMarkdown(testPlan(2, 10)); len(parts) != 1 || strings.Contains(parts[0], "part 1 of") {
		t.Errorf("a small plan: %d parts", len(parts))
	}
	// 10,000 small changes: the summary table alone is larger than a
	// comment, so it continues over the parts, each under the limit.
	parts = RenderMarkdown(testPlan(10000, 1))
	rows := 0
	for i, part := range parts {
		if len(part) >= MarkdownLimit {
			t.Errorf("part %d of 10,000 changes is %d characters", i+1, len(part))
		}
		rows += strings.Count(part, "| `+` |")
	}
	if rows != 10000 {
		t.Errorf("the summary tables hold %d rows, want 10,000", rows)
	}
}

func TestRedacted(t *testing.T) {
	p := testPlan(1, 1)
	p.Changes[0].After = json.RawMessage(`{"Meta":{"api_token":"s3cr3t","team":"edge"}}`)
	p.Changes[0].Requests[0].Body = json.RawMessage(`{"ID":"x","Meta":{"Password":"s3cr3t"}}`)
	r := p.Redacted()
	got := []string{string(r.Changes[0].After), string(r.Changes[0].Requests[0].Body)}
	want := []string{`{"Meta":{"api_token":"(sensitive)","team":"edge"}}`, `{"ID":"x","Meta":{"Password":"(sensitive)"}}`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if !strings.Contains(string(p.Changes[0].After), "s3cr3t") {
		t.Error("Redacted changed the plan itself; a saved plan needs the real values")
	}
}

// BenchmarkRenderText measures the text view of a plan of 1,000 changes
// against a baseline: the JSON encoding of the same plan, which the text
// view reads. The view redacts the plan before it renders it; that is
// measured apart. Compare them in one run (benchstat), not to a constant.
func BenchmarkRenderText(b *testing.B) {
	p := testPlan(1000, 200)
	b.Run("baseline-json", func(b *testing.B) {
		for b.Loop() {
			json.Marshal(p)
		}
	})
	b.Run("text", func(b *testing.B) {
		for b.Loop() {
			RenderText(io.Discard, p, TextOptions{})
		}
	})
	b.Run("redacted", func(b *testing.B) {
		for b.Loop() {
			p.Redacted()
		}
	})
}

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

// TestTargetNeeds: a targeted document brings the index it is written
// into; excluding that index while keeping the document is an error.
func TestTargetNeeds(t *testing.T) {
	index := &Change{Addr: Addr{Kind: "index", Name: ".dashboard"}, Action: Update, Requests: []Request{{Method: "PUT", Path: "/.dashboard/_mapping/search"}}}
	doc := &Change{Addr: Addr{Kind: "document", Name: ".dashboard/search/errors"}, Action: Create, Requests: []Request{{Method: "PUT", Path: "/.dashboard/search/errors"}},
		Needs: []Addr{index.Addr}}
	other := &Change{Addr: Addr{Kind: "service", Name: "api"}, Action: Create, Requests: []Request{{Method: "PUT"}}}
	p := &Plan{Changes: []*Change{other, index, doc}}
	if err := p.Target([]Addr{doc.Addr}, nil); err != nil || len(p.Changes) != 2 || p.Changes[0] != index || p.Changes[1] != doc {
		t.Errorf("-target the document: %v %v", p.Changes, err)
	}
	p = &Plan{Changes: []*Change{other, index, doc}}
	if err := p.Target(nil, []Addr{index.Addr}); err == nil || !strings.Contains(err.Error(), `document[".dashboard/search/errors"] needs index[".dashboard"], which -exclude leaves out`) {
		t.Errorf("-exclude the index: %v", err)
	}
}

// TestMultilineDiff: a multi-line string edited (a markdown
// visualization's text inside its JSON-text visState) shows as a heredoc
// of its lines, the removed and added ones marked, long unchanged runs
// folded, in the text view and in the markdown comment.
func TestMultilineDiff(t *testing.T) {
	before := map[string]any{"visState": map[string]any{"params": map[string]any{"markdown": "### Packetbeat:\n\n[Dashboard](#/dashboard/Packetbeat)\n[Web](#/dashboard/HTTP)\n[MySQL](#/dashboard/MySQL)\n[PgSQL](#/dashboard/PgSQL)\n[Redis](#/dashboard/Redis)\n[Thrift](#/dashboard/Thrift)"}}}
	after := map[string]any{"visState": map[string]any{"params": map[string]any{"markdown": "### Packetbeat:\n\n[Dashboard](#/dashboard/Packetbeat)\n[Web](#/dashboard/HTTP)\n[MySQL](#/dashboard/MySQL)\n[PgSQL](#/dashboard/PgSQL)\n[Redis](#/dashboard/Redis-v2)\n[Thrift](#/dashboard/Thrift)"}}}
	p := &Plan{Project: "beats", Changes: []*Change{{Addr: Addr{Kind: "document", Name: ".dashboard/visualization/Navigation"}, Action: Update,
		Before: RawJSON(before), After: RawJSON(after), Requests: []Request{{Method: "POST", Path: "/_bulk"}}}}}
	p.sort()
	var out bytes.Buffer
	if err := RenderText(&out, p, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	// The heredoc's lines, less the indent of the attribute.
	text := out.String()
	var got []string
	indent := -1
	for _, l := range strings.Split(text, "\n") {
		if indent < 0 && strings.HasSuffix(l, "~ markdown = <<-EOT") {
			indent = len(l) - len("~ markdown = <<-EOT")
		}
		if indent >= 0 {
			got = append(got, l[min(indent, len(l)):])
			if strings.TrimSpace(l) == "EOT" {
				break
			}
		}
	}
	want := []string{
		"~ markdown = <<-EOT",
		"        # (5 unchanged lines hidden)",
		"        [PgSQL](#/dashboard/PgSQL)",
		"      - [Redis](#/dashboard/Redis)",
		"      + [Redis](#/dashboard/Redis-v2)",
		"        [Thrift](#/dashboard/Thrift)",
		"    EOT",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("text view (-want +got):\n%s\n%s", diff, text)
	}
	if md := strings.Join(RenderMarkdown(p), ""); !strings.Contains(md, "- [Redis](#/dashboard/Redis)\n") || !strings.Contains(md, "+ [Redis](#/dashboard/Redis-v2)\n") {
		t.Errorf("markdown:\n%s", md)
	}
}

// TestTogether: the read that fails first is the error, and it cancels
// the others, which do not wait out their own time.
func TestTogether(t *testing.T) {
	refused := errors.New("403 refused")
	start := time.Now()
	err := Together(context.Background(),
		func(ctx context.Context) error {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(10 * time.Second):
				return errors.New("slow")
			}
		},
		func(context.Context) error { return refused })
	if err != refused || time.Since(start) > 5*time.Second {
		t.Errorf("%v after %s, want the refusal at once", err, time.Since(start))
	}
	if err := Together(context.Background(), func(context.Context) error { return nil }); err != nil {
		t.Error(err)
	}
}

// TestDigestList: a list's digest, its elements encoded side by side, is
// the digest of the list encoded whole (plans saved before it still
// match the live state).
func TestDigestList(t *testing.T) {
	type entry struct {
		ID   string
		Meta map[string]string
		Tags []string
	}
	var many []entry
	for i := range 1000 {
		many = append(many, entry{ID: fmt.Sprintf("svc-%d", i), Meta: map[string]string{"b": "<&>", "a": fmt.Sprint(i)}, Tags: []string{"x", "y"}})
	}
	for _, items := range [][]entry{nil, {}, many[:1], many} {
		if got, want := DigestList(items), Digest(items); got != want {
			t.Errorf("%d items: %s, want %s", len(items), got, want)
		}
	}
}
