package pull

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision/addrs"
	"github.com/provision-dev/provision/provision/consul"
	"github.com/provision-dev/provision/provision/consul/kv"
	"github.com/provision-dev/provision/provision/langtest"
	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/provision/search"
	"github.com/provision-dev/provision/schema"
)

// TestRewrites holds the rewrites of one block's values, written in
// place, against the text they must give, and what pull must leave.
func TestRewrites(t *testing.T) {
	for _, tc := range []struct {
		name, spec, before, after, want, left string
		kind                                  addrs.Kind
		ignored                               []string
	}{
		{name: "JSON text in a string stays a string", kind: search.Document,
			spec:   "document \"visualization\" \"v\" {\n  source = {\n    visState = \"{\\\"b\\\":1,\\\"a\\\":2}\"\n  }\n}\n",
			before: `{"visState":{"a":2,"b":5}}`, after: `{"visState":{"a":2,"b":1}}`,
			want: "document \"visualization\" \"v\" {\n  source = {\n    visState = \"{\\\"b\\\":5,\\\"a\\\":2}\"\n  }\n}\n"},
		{name: "a key added to a one-line object", kind: search.Document,
			spec:   "document \"search\" \"s\" {\n  source = { title = \"T\" }\n}\n",
			before: `{"title":"T","hits":3}`, after: `{"title":"T"}`,
			want: "document \"search\" \"s\" {\n  source = { title = \"T\", hits = 3 }\n}\n"},
		{name: "a key removed from a one-line object", kind: search.Document,
			spec:   "document \"search\" \"s\" {\n  source = { title = \"T\", hits = 3 }\n}\n",
			before: `{"title":"T"}`, after: `{"title":"T","hits":3}`,
			want: "document \"search\" \"s\" {\n  source = { title = \"T\" }\n}\n"},
		{name: "an attribute the block does not write", kind: kv.Key,
			spec:   "key \"apps/x\" {\n  value = \"on\"\n\n  lifecycle {\n    prevent_destroy = true\n  }\n}\n",
			before: `{"value":"on","flags":7}`, after: `{"value":"on","flags":0}`,
			want: "key \"apps/x\" {\n  value = \"on\"\n  flags = 7\n\n  lifecycle {\n    prevent_destroy = true\n  }\n}\n"},
		{name: "a dotted key at the source", kind: search.Document,
			spec:   "document \"search\" \"s\" {\n  source = {\n    \"meta.searchSourceJSON\" = { filter = [] } # the filter\n  }\n}\n",
			before: `{"meta":{"searchSourceJSON":{"filter":[{"q":"x"}]}}}`, after: `{"meta":{"searchSourceJSON":{"filter":[]}}}`,
			want: "document \"search\" \"s\" {\n  source = {\n    \"meta.searchSourceJSON\" = { filter = [{\n      q = \"x\"\n    }] } # the filter\n  }\n}\n"},
		{name: "a reference whose value moved is left", kind: search.Document,
			spec:   "document \"visualization\" \"v\" {\n  source = {\n    savedSearchId = document.search.errors.id\n    title         = \"T\"\n  }\n}\n",
			before: `{"savedSearchId":"other","title":"T2"}`, after: `{"savedSearchId":"errors","title":"T"}`,
			want: "document \"visualization\" \"v\" {\n  source = {\n    savedSearchId = document.search.errors.id\n    title         = \"T2\"\n  }\n}\n",
			left: "source.savedSearchId"},
		{name: "a list that grew, with a computed element, is left", kind: search.Document,
			spec:   "document \"search\" \"s\" {\n  source = {\n    columns = [\"a\", local.b]\n  }\n}\n",
			before: `{"columns":["a","b","c"]}`, after: `{"columns":["a","b"]}`,
			left: "source.columns"},
		{name: "a key under ignore_changes is not added", kind: consul.Service, ignored: []string{`meta["owner"]`},
			spec:   "service \"api\" {\n  meta = {\n    team = \"a\"\n  }\n}\n",
			before: `{"Meta":{"owner":"ops","team":"b"}}`, after: `{"Meta":{"owner":"ops","team":"a"}}`,
			want: "service \"api\" {\n  meta = {\n    team = \"b\"\n  }\n}\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, "main.hcl")
			if err := os.WriteFile(file, []byte(tc.spec), 0o644); err != nil {
				t.Fatal(err)
			}
			addr := addrs.Addr{Kind: tc.kind, Name: "x"}
			p := &plans.Plan{Changes: []*plans.Change{{Addr: addr, Action: plans.Update, Before: plans.ViewOf(json.RawMessage(tc.before)), After: plans.ViewOf(json.RawMessage(tc.after)), Ignored: tc.ignored,
				DeclaredAt: plans.At(&hcl.Range{Filename: file, Start: hcl.Pos{Line: 1, Column: 1, Byte: 0}})}}}
			res := Pull(Specs{Dir: dir, Config: schema.NewConfig(langtest.Language)}, p)
			var left []string
			for _, o := range res.Objects {
				left = append(left, o.Left...)
			}
			if got := strings.Join(left, ","); got != tc.left {
				t.Errorf("left %q, want %q (%v)", got, tc.left, res.Diags)
			}
			if got := string(res.Files[file]); got != tc.want {
				t.Errorf("rewritten:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}
