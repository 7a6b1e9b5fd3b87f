package search

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision/plans"
)

// properties is a mapping's "properties" object as JSON-ready values.
func properties(fields []*Field) map[string]any {
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

// MarshalJSON writes the field as it was read, every parameter kept.
func (f liveField) MarshalJSON() ([]byte, error) {
	if f.raw != nil {
		return json.Marshal(f.raw)
	}
	type plain liveField
	return json.Marshal(plain(f))
}

// typeOf is a live field's type; "object" when it only holds properties.
func (f liveField) typeOf() string {
	if f.Type == "" {
		return "object"
	}
	return f.Type
}

// sameType reports whether a live field is what a declared field becomes
// on a server of the given major version. 5.x and later turn a declared
// "string" into "keyword" when its index is not_analyzed or no, and into
// "text" otherwise (5.x StringFieldMapper.TypeParser's auto-upgrade; an
// explicit string gets no "keyword" sub-field, only dynamic mapping adds
// one: see docs/internals/design-notes.md).
func sameType(declared *Field, live liveField, major int) bool {
	t := declared.Type()
	if major >= 5 && t == "string" {
		t = upgradedString(declared.Params)
	}
	return t == live.typeOf()
}

// upgradedString is what 5.x makes of a declared string field.
func upgradedString(params map[string]any) string {
	if ix, _ := params["index"].(string); ix == "not_analyzed" || ix == "no" {
		return "keyword"
	}
	return "text"
}

// fieldDiff compares declared fields with live ones. It returns whether
// any declared field is missing live or has a parameter the server can
// change in place (the type's mapping is sent again), conflicts (a field
// whose type or an unchangeable parameter differs), and the names of live
// fields that are not declared.
func fieldDiff(prefix string, declared []*Field, live map[string]liveField, major int) (update bool, conflicts hcl.Diagnostics, extra []string) {
	names := map[string]bool{}
	for _, f := range declared {
		names[f.Name] = true
		l, ok := live[f.Name]
		if !ok {
			update = true
			continue
		}
		if !sameType(f, l, major) {
			conflicts = append(conflicts, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Field type cannot change",
				Detail: fmt.Sprintf("The field %q is %q on the live cluster and declared as %q. Elasticsearch cannot change a field's type in place, so nothing will be written. "+
					"To change it, declare a new index with the new mapping, reindex the documents into it, and point the dashboard tool at it; or keep the live type.", prefix+f.Name, l.typeOf(), f.Type()),
				Subject: f.Range.Ptr(),
			})
			continue
		}
		u, c := paramDiff(prefix+f.Name, f, l, major)
		update = update || u
		conflicts = append(conflicts, c...)
		m, c, e := fieldDiff(prefix+f.Name+".", f.Properties, l.Properties, major)
		update = update || m
		conflicts = append(conflicts, c...)
		extra = append(extra, e...)
	}
	for name := range live {
		if !names[name] {
			extra = append(extra, prefix+name)
		}
	}
	sort.Strings(extra)
	return update, conflicts, extra
}

// paramDiff compares every declared parameter of a field with the live
// one, the server's default standing in for a parameter the live mapping
// does not show. A difference the server can make in place is an update;
// any other a conflict naming both values.
func paramDiff(name string, f *Field, l liveField, major int) (update bool, conflicts hcl.Diagnostics) {
	for _, p := range slices.Sorted(maps.Keys(f.Params)) {
		if p == "type" || p == "properties" {
			continue
		}
		want := f.Params[p]
		if dropped(f.Type(), p, major) || unknowable(p, f.Params, l, major) {
			continue
		}
		if major >= 5 && f.Type() == "string" && p == "index" {
			// The index of a declared string became the type (sameType);
			// "no" stays as index: false.
			if want != "no" {
				continue
			}
			want = false
		}
		have, shown := l.raw[p]
		if !shown {
			have, shown = defaultParam(l.typeOf(), p, l.raw, major)
		}
		if p == "fields" {
			u, c := multiFieldDiff(name, f, want, l, major)
			update, conflicts = update || u, append(conflicts, c...)
			continue
		}
		if shown && sameParam(p, want, have) && !(p == "index_options" && major == 2 && l.raw["index"] == "no") {
			// (index_options on a 2.x field that is not indexed, even the
			// default, makes it indexed: refused as "different [index]
			// values" [LIVE-2.4.1].)
			continue
		}
		if updatable(p, l, have, want, major) {
			update = true
			continue
		}
		live := "not set"
		if shown {
			live = plans.Compact(have)
		}
		conflicts = append(conflicts, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Field parameter cannot change",
			Detail: fmt.Sprintf("The field %q has %s = %s on the live cluster and %s declared. Elasticsearch %d.x cannot change %s on an existing field, so nothing will be written. "+
				"To change it, declare a new index with the new mapping and reindex the documents into it; or declare the live value.", name, p, live, plans.Compact(want), major, p),
			Subject: f.Range.Ptr(),
		})
	}
	u, c := undeclaredParams(name, f, l, major)
	return update || u, append(conflicts, c...)
}

// undeclaredParams compares the parameters the live field shows and the
// declaration leaves out with the server's default for the declared
// field: Elasticsearch takes a parameter left out of a PUT mapping as its
// default, not as "keep the live value" ([LIVE-2.4.1]: re-sending
// {"type":"string"} over a not_analyzed string is refused with "different
// [index] values", while an ignore_above left out is reset). A parameter
// without a known default is left alone.
func undeclaredParams(name string, f *Field, l liveField, major int) (update bool, conflicts hcl.Diagnostics) {
	typ := f.Type()
	if major >= 5 && typ == "string" {
		typ = upgradedString(f.Params)
	}
	for _, p := range slices.Sorted(maps.Keys(l.raw)) {
		if _, declared := f.Params[p]; declared || p == "type" || p == "properties" || p == "fields" || kept(p) || unknowable(p, f.Params, l, major) {
			continue
		}
		want, known := defaultParam(typ, p, f.Params, major)
		have := l.raw[p]
		if !known || sameParam(p, want, have) {
			continue
		}
		if updatable(p, l, have, want, major) {
			update = true
			continue
		}
		conflicts = append(conflicts, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Field parameter cannot change",
			Detail: fmt.Sprintf("The field %q has %s = %s on the live cluster, and the declaration leaves %s out, which Elasticsearch takes as its default, %s. Elasticsearch %d.x cannot change %s on an existing field, so nothing will be written. "+
				"Declare %s = %s to keep the live value; or declare a new index with the new mapping and reindex the documents into it.", name, p, plans.Compact(have), p, plans.Compact(want), major, p, p, plans.Compact(have)),
			Subject: f.Range.Ptr(),
		})
	}
	return update, conflicts
}

// multiFieldDiff compares declared multi-fields (fields = {...}) with the
// live ones: a new sub-field is added in place; a sub-field of another
// type is a conflict. Live sub-fields are never removed.
func multiFieldDiff(name string, f *Field, want any, l liveField, major int) (update bool, conflicts hcl.Diagnostics) {
	subs, _ := want.(map[string]any)
	for _, sub := range slices.Sorted(maps.Keys(subs)) {
		m, _ := subs[sub].(map[string]any)
		lf, ok := l.Fields[sub]
		switch {
		case !ok:
			update = true
		case !sameType(&Field{Params: m}, lf, major):
			conflicts = append(conflicts, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Field type cannot change",
				Detail:   fmt.Sprintf("The sub-field %q of %q is %q on the live cluster and declared as %q; a type cannot change in place. Declare another sub-field name, or a new index and reindex.", sub, name, lf.typeOf(), m["type"]),
				Subject:  f.Range.Ptr(),
			})
		default:
			u, c := paramDiff(name+"."+sub, &Field{Name: sub, Params: m, Range: f.Range}, lf, major)
			update, conflicts = update || u, append(conflicts, c...)
		}
	}
	return update, conflicts
}

// updatable says whether a server of the given major version changes a
// field parameter in place from have to want, per the table in the
// table in docs/language/index.md (es-api-facts terms: [LIVE-2.4.1] for 2.x,
// [SRC] MappedFieldType/ParametrizedFieldMapper for 5.x to 7.x).
func updatable(p string, l liveField, have, want any, major int) bool {
	switch p {
	case "ignore_above", "search_analyzer", "search_quote_analyzer", "copy_to", "fielddata", "fielddata_frequency_filter",
		"eager_global_ordinals", "ignore_malformed", "coerce", "dynamic":
		return true
	case "boost":
		// In 2.x a boost needs norms: on a field without them (a
		// not_analyzed string, a number) a boost turns them on, which is
		// refused ("omit_norms ... cannot change from disable to enabled",
		// [LIVE-2.4.1]).
		if major == 2 {
			return analyzed(l.typeOf(), l.raw) || boostOf(want) == 1
		}
		return major <= 7
	case "index_options":
		// Options of a field that is not indexed make it indexed: refused
		// as "different [index] values" ([LIVE-2.4.1]).
		return major <= 6 && l.raw["index"] != "no" && l.raw["index"] != false
	case "null_value":
		return major <= 7
	case "include_in_all":
		return major <= 5
	case "format", "locale":
		return major <= 5
	case "doc_values": // only switched off, and only on 2.x
		return major == 2 && want == false
	case "norms": // only disabled
		return !normsEnabled(want) && normsEnabled(have)
	}
	return false // index, store, analyzer, similarity, term_vector, precision_step, ...
}

// boostOf is a boost parameter's value, 1 when it is not set.
func boostOf(v any) float64 {
	switch t := v.(type) {
	case float64:
		return t
	case int64:
		return float64(t)
	case int:
		return float64(t)
	}
	return 1
}

// kept are the parameters a server keeps when a PUT mapping leaves them
// out (2.x's Explicit settings: [LIVE-2.4.1] re-sending {"type":"long"}
// over a long with ignore_malformed keeps it): left out of a declaration,
// they mean "as live".
func kept(p string) bool { return p == "ignore_malformed" || p == "coerce" }

// dropped are the parameters a server accepts and forgets for a type
// ([LIVE-2.4.1]: a boolean's include_in_all is never echoed, and a boolean
// is never in _all): comparing them would plan a change forever.
func dropped(typ, p string, major int) bool {
	return major == 2 && typ == "boolean" && p == "include_in_all"
}

// sameParam compares a parameter's values as the server means them:
// norms true is norms {"enabled": true}.
func sameParam(p string, a, b any) bool {
	if p == "norms" {
		return normsEnabled(a) == normsEnabled(b)
	}
	return sameJSON(a, b)
}

// analyzed reports whether a 2.x field is an analyzed string, which has
// norms whatever its boost.
func analyzed(typ string, params map[string]any) bool {
	return typ == "string" && (params["index"] == nil || params["index"] == "analyzed")
}

// unknowable are the parameters a server's GET _mapping does not show
// well enough to compare: in 2.x, the norms of a boosted field that is
// not an analyzed string are on or off depending on how it was made, and
// show the same either way ([LIVE-2.4.1]).
func unknowable(p string, declared map[string]any, l liveField, major int) bool {
	return p == "norms" && major == 2 && !analyzed(l.typeOf(), l.raw) && (boostOf(declared["boost"]) != 1 || boostOf(l.raw["boost"]) != 1)
}

func normsEnabled(v any) bool {
	switch t := v.(type) {
	case bool:
		return t
	case map[string]any:
		return t["enabled"] != false
	}
	return true
}

// defaultParam is the value a server uses for a parameter its GET
// _mapping does not show ([LIVE-2.4.1] for 2.x: an analyzed string drops
// index, a not_analyzed one drops doc_values: true; 5.x and later drop
// every default).
func defaultParam(typ, p string, raw map[string]any, major int) (any, bool) {
	switch p {
	case "index":
		switch {
		case typ == "string":
			return "analyzed", true
		case major >= 5:
			return true, true
		}
		return "not_analyzed", true // 2.x numbers, dates, booleans
	case "fielddata", "eager_global_ordinals":
		return false, true
	case "doc_values":
		// 2.x: none for an analyzed string or a field that is not indexed
		// ([LIVE-2.4.1]: {"type":"integer","index":"no"} re-sent without
		// doc_values is refused as "cannot change from disabled to
		// enabled").
		if major == 2 && (raw["index"] == "no" || typ == "string" && raw["index"] == nil) {
			return false, true
		}
		return typ != "text", true
	case "store":
		return false, true
	case "analyzer":
		return "default", true
	case "boost":
		return 1.0, true
	case "norms":
		if major == 2 {
			// 2.x: norms for an analyzed string, and for any other field
			// only with a boost ([LIVE-2.4.1]: an integer with boost 2
			// echoes "norms":{"enabled":true}).
			return analyzed(typ, raw) || boostOf(raw["boost"]) != 1, true
		}
		return typ != "keyword", true
	case "include_in_all", "coerce":
		return true, true
	case "ignore_malformed":
		return false, true
	case "similarity":
		return "default", true
	case "term_vector":
		return "no", true
	case "index_options":
		if typ == "string" && raw["index"] == nil || typ == "text" {
			return "positions", true
		}
		return "docs", true
	case "search_analyzer":
		if a, ok := raw["analyzer"]; ok {
			return a, true
		}
		return "default", true
	case "ignore_above", "null_value", "copy_to":
		return nil, true // none
	}
	return nil, false
}

func sameJSON(a, b any) bool { return plans.Compact(a) == plans.Compact(b) }

// liveView is the live mapping restricted to the declared fields, in the
// shape of properties(), for a plan's Before.
func liveView(declared []*Field, live map[string]liveField) map[string]any {
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

// fieldsOf lists the declared fields, nested ones included, of the given
// types.
func fieldsOf(fields []*Field, types ...string) []*Field {
	var out []*Field
	for _, f := range fields {
		if slices.Contains(types, f.Type()) {
			out = append(out, f)
		}
		out = append(out, fieldsOf(f.Properties, types...)...)
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

// sharedFieldConflicts checks, on a server with several types per index
// (2.x, 5.x), the declared fields against the live types the specs do not
// declare (the dashboard tool's own config type): a field name shared by
// the types of one index must have one mapping, or Elasticsearch refuses
// the type that disagrees ("conflicts with existing mapping in other
// types", [LIVE-2.4.1]). Declared types are checked against each other
// when the specs load.
func sharedFieldConflicts(ix *IndexDecl, live liveIndex, major int) hcl.Diagnostics {
	if major != 2 && major != 5 {
		return nil
	}
	var diags hcl.Diagnostics
	for _, other := range undeclaredTypes(ix, live) {
		for _, m := range ix.Mappings {
			walkShared("", m.Properties, live.Mappings[other].Properties, func(path string, f *Field, l liveField) {
				same := sameType(f, l, major)
				if same {
					u, c := paramDiff(path, f, l, major)
					same = !u && len(c) == 0
				}
				if !same {
					diags = append(diags, &hcl.Diagnostic{
						Severity: hcl.DiagError,
						Summary:  "Field mapped differently in another type",
						Detail: fmt.Sprintf("The field %q of type %q is declared as %s, and the live type %q of index %q, which the specs do not declare, maps it as %s. In Elasticsearch %d.x the types of one index share a field's mapping, so the server would refuse the type; nothing will be written. "+
							"Declare the field as the live type has it, or give it another name.", path, m.Type, plans.Compact(f.Params), other, ix.Name, plans.Compact(liveParams(l)), major),
						Subject: f.Range.Ptr(),
					})
				}
			})
		}
	}
	return diags
}

// walkShared calls f for every declared field that the live properties
// also hold, by dotted path.
func walkShared(prefix string, declared []*Field, live map[string]liveField, f func(path string, d *Field, l liveField)) {
	for _, d := range declared {
		l, ok := live[d.Name]
		if !ok {
			continue
		}
		if len(d.Properties) > 0 {
			walkShared(prefix+d.Name+".", d.Properties, l.Properties, f)
			continue
		}
		f(prefix+d.Name, d, l)
	}
}

// liveParams are a live field's parameters but its nested properties.
func liveParams(l liveField) map[string]any {
	out := map[string]any{}
	for k, v := range l.raw {
		if k != "properties" {
			out[k] = v
		}
	}
	return out
}
