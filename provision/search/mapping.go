package search

import (
	"encoding/json"
	"fmt"
	"maps"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/schema"
)

// properties is a mapping's "properties" object as JSON-ready values.
func properties(fields []*schema.Field) map[string]any {
	out := map[string]any{}
	for _, f := range fields {
		m := maps.Clone(f.Params)
		if len(f.Properties) > 0 {
			m["properties"] = properties(f.Properties)
		}
		out[f.Name] = m
	}
	return out
}

// liveField is a field of a live mapping.
type liveField struct {
	Type       string               `json:"type"`
	Properties map[string]liveField `json:"properties"`
	Fields     map[string]liveField `json:"fields"`
	raw        map[string]any
}

func (f *liveField) UnmarshalJSON(b []byte) error {
	type plain liveField
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*f = liveField(p)
	return json.Unmarshal(b, &f.raw)
}

// typeOf is a live field's type; "object" when it only holds properties.
func (f liveField) typeOf() string {
	if f.Type == "" {
		return "object"
	}
	return f.Type
}

// sameType reports whether a live field is what a declared type becomes on
// a server of the given major version. 5.x and later turn a declared
// "string" into "text" (with a "keyword" sub-field) or "keyword".
func sameType(declared string, live liveField, major int) bool {
	if declared == live.typeOf() {
		return true
	}
	return declared == "string" && major >= 5 && (live.Type == "text" || live.Type == "keyword")
}

// fieldDiff compares declared fields with live ones. It returns whether
// any declared field is missing live, conflicts (a field whose type
// differs), and the names of live fields that are not declared.
func fieldDiff(prefix string, declared []*schema.Field, live map[string]liveField, major int) (missing bool, conflicts hcl.Diagnostics, extra []string) {
	names := map[string]bool{}
	for _, f := range declared {
		names[f.Name] = true
		l, ok := live[f.Name]
		if !ok {
			missing = true
			continue
		}
		if !sameType(f.Type(), l, major) {
			conflicts = append(conflicts, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Field type cannot change",
				Detail: fmt.Sprintf("The field %q is %q on the live cluster and declared as %q. Elasticsearch cannot change a field's type in place, so nothing will be written. "+
					"To change it, declare a new index with the new mapping, reindex the documents into it, and point the dashboard tool at it; or keep the live type.", prefix+f.Name, l.typeOf(), f.Type()),
				Subject: f.Range.Ptr(),
			})
			continue
		}
		m, c, e := fieldDiff(prefix+f.Name+".", f.Properties, l.Properties, major)
		missing = missing || m
		conflicts = append(conflicts, c...)
		extra = append(extra, e...)
	}
	for name := range live {
		if !names[name] {
			extra = append(extra, prefix+name)
		}
	}
	sort.Strings(extra)
	return missing, conflicts, extra
}

// liveView is the live mapping restricted to the declared fields, in the
// shape of properties(), for a plan's Before.
func liveView(declared []*schema.Field, live map[string]liveField) map[string]any {
	out := map[string]any{}
	for _, f := range declared {
		l, ok := live[f.Name]
		if !ok {
			continue
		}
		m := map[string]any{}
		for k, v := range l.raw {
			if k != "properties" && k != "fields" {
				if _, declaredParam := f.Params[k]; declaredParam || k == "type" {
					m[k] = v
				}
			}
		}
		if len(f.Properties) > 0 {
			m["properties"] = liveView(f.Properties, l.Properties)
		}
		out[f.Name] = m
	}
	return out
}

// stringFields lists the declared fields of type "string", which 6.x and
// later refuse.
func stringFields(fields []*schema.Field) []*schema.Field {
	var out []*schema.Field
	for _, f := range fields {
		if f.Type() == "string" {
			out = append(out, f)
		}
		out = append(out, stringFields(f.Properties)...)
	}
	return out
}

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}
