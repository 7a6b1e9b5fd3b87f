package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/provision-dev/provision/provision/adapter"
	"github.com/provision-dev/provision/provision/addrs"
	"github.com/provision-dev/provision/provision/consul"
	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/provision/plans/planstest"
	"github.com/provision-dev/provision/provision/search"
)

// TestMarkdownParts splits a large plan into parts under the limit that
// together hold every change once.
func TestMarkdownParts(t *testing.T) {
	parts := Markdown(planstest.Plan(consul.Service, 60, 3000))
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
	if parts := Markdown(planstest.Plan(consul.Service, 2, 10)); len(parts) != 1 || strings.Contains(parts[0], "part 1 of") {
		t.Errorf("a small plan: %d parts", len(parts))
	}
	// 10,000 small changes: the summary table alone is larger than a
	// comment, so it continues over the parts, each under the limit.
	parts = Markdown(planstest.Plan(consul.Service, 10000, 1))
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

// BenchmarkText measures the text view of a plan of 1,000 changes
// against a baseline: the JSON encoding of the same plan, which the text
// view reads. The view redacts the plan before it renders it; that is
// measured apart. Compare them in one run (benchstat), not to a constant.
func BenchmarkText(b *testing.B) {
	p := planstest.Plan(consul.Service, 1000, 200)
	b.Run("baseline-json", func(b *testing.B) {
		for b.Loop() {
			json.Marshal(p)
		}
	})
	b.Run("text", func(b *testing.B) {
		for b.Loop() {
			Text(io.Discard, p, TextOptions{})
		}
	})
	b.Run("redacted", func(b *testing.B) {
		for b.Loop() {
			p.Redacted()
		}
	})
}

// TestMultilineDiff: a multi-line string edited (a markdown
// visualization's text inside its JSON-text visState) shows as a heredoc
// of its lines, the removed and added ones marked, long unchanged runs
// folded, in the text view and in the markdown comment.
func TestMultilineDiff(t *testing.T) {
	before := map[string]any{"visState": map[string]any{"params": map[string]any{"markdown": "### Packetbeat:\n\n[Dashboard](#/dashboard/Packetbeat)\n[Web](#/dashboard/HTTP)\n[MySQL](#/dashboard/MySQL)\n[PgSQL](#/dashboard/PgSQL)\n[Redis](#/dashboard/Redis)\n[Thrift](#/dashboard/Thrift)"}}}
	after := map[string]any{"visState": map[string]any{"params": map[string]any{"markdown": "### Packetbeat:\n\n[Dashboard](#/dashboard/Packetbeat)\n[Web](#/dashboard/HTTP)\n[MySQL](#/dashboard/MySQL)\n[PgSQL](#/dashboard/PgSQL)\n[Redis](#/dashboard/Redis-v2)\n[Thrift](#/dashboard/Thrift)"}}}
	p := &plans.Plan{Project: "beats", Changes: []*plans.Change{{Addr: addrs.Addr{Kind: search.Document, Name: ".dashboard/visualization/Navigation"}, Action: plans.Update,
		Before: plans.ViewOf(adapter.RawJSON(before)), After: plans.ViewOf(adapter.RawJSON(after)), Requests: []plans.Request{{Method: "POST", Path: "/_bulk"}}}}}
	p.Sort()
	var out bytes.Buffer
	if err := Text(&out, p, TextOptions{}); err != nil {
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
	if md := strings.Join(Markdown(p), ""); !strings.Contains(md, "- [Redis](#/dashboard/Redis)\n") || !strings.Contains(md, "+ [Redis](#/dashboard/Redis-v2)\n") {
		t.Errorf("markdown:\n%s", md)
	}
}

// TestGraphNeeds: graph draws an edge from the last request of a change
// to the first of each change that needs it.
func TestGraphNeeds(t *testing.T) {
	index := planstest.Change(consul.Service, "ix", plans.Create, "/ix/", "/ix/_mapping/search")
	search := planstest.Change(consul.Service, "search", plans.Create, "/ix/search/errors")
	search.Needs = []addrs.Addr{index.Addr}
	var out strings.Builder
	if err := DOT(&out, &plans.Plan{Project: "p", Changes: []*plans.Change{index, search}}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"0.2" -> "1.1";`) {
		t.Errorf("no edge from the index's last request to the search:\n%s", out.String())
	}
}
