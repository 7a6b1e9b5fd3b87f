package adapter

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision/addrs"
	"github.com/provision-dev/provision/provision/plans"
)

// TestDigestList: a list's digest, its elements encoded side by side, is
// the digest of the list encoded whole (plans saved before it still
// match the live state), in runs or not.
func TestDigestList(t *testing.T) {
	type entry struct {
		ID   string
		Meta map[string]string
		Tags []string
	}
	var many []entry
	for i := range 2*digestRun + 3 {
		many = append(many, entry{ID: fmt.Sprintf("svc-%d", i), Meta: map[string]string{"b": "<&>", "a": fmt.Sprint(i)}, Tags: []string{"x", "y"}})
	}
	for _, items := range [][]entry{nil, {}, many[:1], many[:digestRun], many} {
		if got, want := DigestList(items), Digest(items); got != want {
			t.Errorf("%d items: %s, want %s", len(items), got, want)
		}
	}
}

// testService is a kind of the tests' own: the ownership rule names a
// kind but never asks what it is, and the kinds' packages import this one.
var testService = addrs.NewKind(addrs.KindSpec{Name: "service", Form: "service.<id>", Order: 10})

// TestDecide: the ownership rule, every case.
func TestDecide(t *testing.T) {
	at := &hcl.Range{Filename: "main.hcl", Start: hcl.Pos{Line: 3}}
	imp := &hcl.Range{Filename: "main.hcl", Start: hcl.Pos{Line: 9}}
	d := Declared{Addr: addrs.Addr{Kind: testService, Name: "api"}, Subject: at}
	withImport := d
	withImport.Import = imp
	tests := map[string]struct {
		declared Declared
		live     LiveObject
		claim    Claim
		summary  string
		note     bool
	}{
		"absent: created": {d, LiveObject{}, ClaimCreate, "", false},
		"absent, with an import: nothing to import": {withImport, LiveObject{}, ClaimRefused, "Nothing to import", false},
		"own: managed":                         {d, LiveObject{Exists: true, Owner: "edge"}, ClaimManage, "", false},
		"own, with an import: managed, a note": {withImport, LiveObject{Exists: true, Owner: "edge"}, ClaimManage, "", true},
		"another project's: refused":           {d, LiveObject{Exists: true, Owner: "other"}, ClaimRefused, "The service belongs to another project", false},
		"another project's, with an import":    {withImport, LiveObject{Exists: true, Owner: "other"}, ClaimRefused, "The service belongs to another project", false},
		"nobody's, with an import: imported":   {withImport, LiveObject{Exists: true}, ClaimImport, "", false},
		"nobody's: refused":                    {d, LiveObject{Exists: true}, ClaimRefused, "The service exists and provision does not own it", false},
	}
	for name, tt := range tests {
		claim, note, refusal := Decide("edge", tt.declared, tt.live)
		summary := ""
		if refusal != nil {
			summary = refusal.Summary
		}
		if claim != tt.claim || summary != tt.summary || (note != "") != tt.note {
			t.Errorf("%s: Decide = %v, %q, %q; want %v, %q, note %v", name, claim, note, summary, tt.claim, tt.summary, tt.note)
		}
	}
}

// TestProposeViews: a converged object's sides are one encoding, of the
// live object, made only when read (a plan shown as text reads none); a
// change that does something has both now.
func TestProposeViews(t *testing.T) {
	encoded := map[string]int{}
	side := func(name string) func() json.RawMessage {
		return func() json.RawMessage { encoded[name]++; return json.RawMessage(`"` + name + `"`) }
	}
	object := func(diff Diff) Object {
		return Object{
			Declared: Declared{Addr: addrs.Addr{Kind: testService, Name: "api"}},
			After:    side("after"), Before: side("before"), SameView: true,
			Live: LiveObject{Exists: true, Owner: "edge"},
			Diff: func(bool) Diff { return diff },
		}
	}
	c, diags := Propose("edge", object(Diff{}))
	if diags.HasErrors() || c.Action != plans.NoOp {
		t.Fatalf("converged: %v, %s", c, diags)
	}
	if len(encoded) != 0 {
		t.Fatalf("a no-op's sides were encoded before they were read: %v", encoded)
	}
	if b, a := c.Before.JSON(), c.After.JSON(); string(b) != `"before"` || string(a) != `"before"` || encoded["before"] != 1 {
		t.Errorf("no-op read: before %s, after %s, encoded %v; want the live encoding once for both", b, a, encoded)
	}
	clear(encoded)
	update := Diff{Reasons: []Reason{{Code: plans.ReasonChanged, Words: "port changed"}}, Requests: []plans.Request{{Method: "PUT", Path: "/v1/agent/service/register"}}}
	if c, _ = Propose("edge", object(update)); c.Action != plans.Update || encoded["before"] != 1 || encoded["after"] != 1 {
		t.Fatalf("update: %v, encoded %v; want both sides now", c.Action, encoded)
	}
	if b, a := c.Before.JSON(), c.After.JSON(); string(b) != `"before"` || string(a) != `"after"` {
		t.Errorf("update read: before %s, after %s", b, a)
	}
}
