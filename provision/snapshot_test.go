package provision

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision/plans"
)

// counted is a backend whose state is a number of services, and which
// counts the states it decodes.
type counted struct {
	NoCapabilities
	name, kind string
	decodes    int
}

type countState struct {
	Services int `json:"services"`
}

func (countState) Server() string { return "" }
func (countState) Known() error   { return nil }

func (c *counted) Info() plans.BackendInfo {
	return plans.BackendInfo{Name: c.name, Kind: c.kind, Address: "http://" + c.name}
}
func (c *counted) Read(context.Context, plans.Mode) (plans.State, hcl.Diagnostics) { return nil, nil }
func (c *counted) Plan(plans.State, plans.Mode) (Planning, hcl.Diagnostics) {
	return Planning{}, nil
}
func (c *counted) DecodeState(dec *json.Decoder) (plans.State, error) {
	c.decodes++
	var st countState
	err := dec.Decode(&st)
	return st, err
}

// TestSnapshotRead: a snapshot's states are decoded by their backends as
// the file is read, each once however many plans are made from it, in
// whatever order a hand-edited file gives its fields; a file that is not
// a snapshot is a diagnostic at the line of the fault, and a state its
// backend cannot read leaves the others read.
func TestSnapshotRead(t *testing.T) {
	const header = `{
  "format_version": "1.0",
  "project": "p",
  "taken_at": "2025-11-25T00:00:00Z",
`
	one := `    {
      "name": "a",
      "kind": "k",
      "address": "http://a",
      "state": {"services": 1}
    }`
	cases := []struct {
		name, src string
		// want is the number of services of a and b, or the diagnostics
		// (summary, line) of reading the file and its states.
		a, b  int
		diags []string
	}{
		{name: "as written", src: header + `  "backends": [
` + one + `,
    {
      "name": "b",
      "kind": "k",
      "address": "http://b",
      "state": {"services": 2}
    }
  ]
}
`, a: 1, b: 2},
		{name: "state first, header last", src: `{
  "backends": [
` + one + `,
    {"state": {"services": 2}, "kind": "k", "name": "b", "address": "http://b"}
  ],
  "format_version": "1.0",
  "project": "p",
  "taken_at": "2025-11-25T00:00:00Z",
  "record": null
}
`, a: 1, b: 2},
		{name: "a field after the backends", src: header + `  "backends": [
` + one + `
  ],
  "record": {"agents": {}}
}
`, a: 1, diags: []string{"Backend missing from the snapshot: 1"}},
		{name: "unknown field in a state", src: header + `  "backends": [
` + one + `,
    {
      "name": "b",
      "kind": "k",
      "address": "http://b",
      "state": {"services": 2, "checks": 1}
    }
  ]
}
`, a: 1, diags: []string{"The snapshot is not valid: 16 (The state of b cannot be read back: unknown field \"checks\".)"}},
		{name: "a type error in a state", src: header + `  "backends": [
    {
      "name": "a",
      "kind": "k",
      "address": "http://a",
      "state": {
        "services": "one"
      }
    }
  ]
}
`, diags: []string{"The snapshot is not valid: 11 (The state of a cannot be read back: cannot unmarshal string into Go struct field countState.services of type int.)", "Backend missing from the snapshot: 1"}},
		{name: "broken in a state", src: header + `  "backends": [
    {
      "name": "a",
      "kind": "k",
      "address": "http://a",
      "state": {
        "services": 1,,
      }
    }
  ]
}
`, diags: []string{"The snapshot is not valid: 11"}},
		{name: "unknown field in a backend", src: header + `  "backends": [
    {
      "name": "a",
      "kind": "k",
      "adress": "http://a"
    }
  ]
}
`, diags: []string{"The snapshot is not valid: 9 (p.json is not a snapshot written by provision snapshot: unknown field \"adress\".)"}},
		{name: "backends twice", src: header + `  "backends": [],
  "backends": []
}
`, diags: []string{"The snapshot is not valid: 6"}},
		{name: "cut short", src: header + `  "backends": [
` + one, diags: []string{"The snapshot is not valid: 11"}},
	}
	for _, c := range cases {
		for _, early := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s, early %v", c.name, early), func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "p.json")
				if err := os.WriteFile(path, []byte(c.src), 0o644); err != nil {
					t.Fatal(err)
				}
				a, b := &counted{name: "a", kind: "k"}, &counted{name: "b", kind: "k"}
				snap, diags := ReadSnapshot(path)
				if diags.HasErrors() {
					t.Fatalf("ReadSnapshot: %v", diags)
				}
				// Early, the states of kind k are decoded beside the load,
				// by a backend of that kind that no spec declared; Live
				// takes them, or decodes again when that found a fault.
				stand := &counted{kind: "k"}
				if early {
					snap.DecodeEarly(map[string]StateDecoder{"k": stand.DecodeState})
				}
				var got []string
				var live *plans.Live
				for range 2 { // a second plan from the same snapshot decodes nothing again
					if live, diags = snap.Live("p", []Backend{a, b}); len(got) == 0 {
						got = said(diags, c.diags, filepath.Dir(path)+string(filepath.Separator))
					}
				}
				if diff := cmp.Diff(c.diags, got); diff != "" {
					t.Errorf("diagnostics (-want +got):\n%s", diff)
				}
				switch {
				case len(c.diags) > 0:
				case !early && (a.decodes != 1 || b.decodes != 1):
					t.Errorf("states decoded %d and %d times, want once each", a.decodes, b.decodes)
				case early && (a.decodes != 0 || b.decodes != 0 || stand.decodes != 2):
					t.Errorf("states decoded %d and %d times by their backends, %d early; want 0, 0, 2", a.decodes, b.decodes, stand.decodes)
				}
				if live == nil {
					return
				}
				for name, want := range map[string]int{"a": c.a, "b": c.b} {
					st, ok := live.States[name].(countState)
					if ok != (want > 0) || st.Services != want {
						t.Errorf("state of %s: %#v, want %d services", name, live.States[name], want)
					}
				}
			})
		}
	}
}

// said is each diagnostic as "summary: line", with its detail (dir cut
// out) when the wanted line of its place has one.
func said(diags hcl.Diagnostics, want []string, dir string) []string {
	var out []string
	for i, d := range diags {
		s := fmt.Sprintf("%s: %d", d.Summary, d.Subject.Start.Line)
		if i < len(want) && strings.Contains(want[i], "(") {
			s += " (" + strings.ReplaceAll(d.Detail, dir, "") + ")"
		}
		out = append(out, s)
	}
	return out
}

// entries decodes a state of services by port an entry at a time
// (DecodeEntries), as the consul backend does.
type entries struct{ counted }

type portState map[string]struct{ Port int }

func (portState) Server() string { return "" }
func (portState) Known() error   { return nil }

func (e *entries) DecodeState(dec *json.Decoder) (plans.State, error) {
	st := portState{}
	return st, DecodeEntries(dec, func(key string) error {
		if key != "services" {
			return fmt.Errorf("json: unknown field %q", key)
		}
		return DecodeEntries(dec, func(id string) error {
			var s struct{ Port int }
			err := dec.Decode(&s)
			st[id] = s
			return err
		})
	})
}

// TestDecodeEntries: a state decoded an entry at a time reads as a whole
// one does, and its faults point at their line and column: a type error
// in the third service, an unknown field at its key.
func TestDecodeEntries(t *testing.T) {
	state := `{
        "services": {
          "a": {"Port": 1},
          "b": {"Port": 2},
          "c": {"Port": "3"}
        }
      }`
	for _, c := range []struct {
		name, state string
		want        []string // summary: line:column, and the detail
	}{
		{"as written", strings.Replace(state, `"3"`, `3`, 1), nil},
		{"a type error", state, []string{`The snapshot is not valid: 11:28 The state of a cannot be read back: cannot unmarshal string into Go struct field .Port of type int.`}},
		{"an unknown field", `{"services": {}, "checks": {}}`, []string{`The snapshot is not valid: 7:43 The state of a cannot be read back: unknown field "checks".`}},
		{"a list for the services", `{"services": [1, {"a": 2}]}`, []string{`The snapshot is not valid: 7:29 The state of a cannot be read back: cannot unmarshal [ into Go value of type map[string]interface {}.`}},
	} {
		for _, early := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s, early %v", c.name, early), func(t *testing.T) {
				src := `{
  "format_version": "1.0",
  "project": "p",
  "taken_at": "2025-11-25T00:00:00Z",
  "backends": [
    {"name": "a", "kind": "k", "address": "http://a",
      "state": ` + c.state + `
    }
  ]
}
`
				path := filepath.Join(t.TempDir(), "p.json")
				if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
					t.Fatal(err)
				}
				snap, diags := ReadSnapshot(path)
				if diags.HasErrors() {
					t.Fatalf("ReadSnapshot: %v", diags)
				}
				a := &entries{counted{name: "a", kind: "k"}}
				if early {
					snap.DecodeEarly(map[string]StateDecoder{"k": a.DecodeState})
				}
				live, diags := snap.Live("p", []Backend{a})
				var got []string
				for _, d := range diags {
					got = append(got, fmt.Sprintf("%s: %d:%d %s", d.Summary, d.Subject.Start.Line, d.Subject.Start.Column, d.Detail))
				}
				if d := cmp.Diff(c.want, got); d != "" {
					t.Errorf("diagnostics (-want +got):\n%s", d)
				}
				if c.want == nil && !cmp.Equal(live.States["a"], portState{"a": {1}, "b": {2}, "c": {3}}) {
					t.Errorf("state %v", live.States["a"])
				}
			})
		}
	}
}
