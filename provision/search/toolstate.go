package search

import (
	"encoding/json"
	"maps"
)

// The dashboard tool's own bookkeeping in a saved object is not drift.
// Kibana 4.x's index pattern (src/ui/public/index_patterns/
// _index_pattern.js, popularizeField) raises a field's count in the
// pattern's fields by one each time a person adds the field as a column
// in Discover or filters on it, and saves the pattern whole: usage, not
// a change of what the field is. A declared count of 0 or none (what the
// tool's exports hold) takes the live count, so that no plan resets it
// and watch -heal leaves it; a positive count is declared, and planned
// as written. What a field is (its name, type, indexed, analyzed,
// scripted, its script) is compared as declared. The other fields the
// tool writes on a save (hits, version, uiStateJSON, a dashboard's
// panels) are written only by a person's save or not at all (hits and
// version stay at their defaults of 0 and 1 in Kibana 4.x's saved search,
// visualization and dashboard classes), so they are edits, and plan as
// such.

// keepToolState is the declared source of a document of type typ with
// the live popularity counts of an index pattern's fields, where the
// specs declare none; source itself when nothing is taken.
func keepToolState(typ string, source map[string]any, live liveDoc, exists bool) map[string]any {
	if typ != "index-pattern" || !exists {
		return source
	}
	declared, text := jsonList(source["fields"])
	current, _ := jsonList(live.Source["fields"])
	if declared == nil || current == nil {
		return source
	}
	counts := map[string]float64{}
	for _, e := range current {
		f, _ := e.(map[string]any)
		name, named := f["name"].(string)
		if n, ok := number(f["count"]); named && ok {
			counts[name] = n
		}
	}
	changed := false
	out := make([]any, len(declared))
	for i, e := range declared {
		out[i] = e
		f, _ := e.(map[string]any)
		name, named := f["name"].(string)
		declaredCount, declares := number(f["count"])
		liveCount, has := counts[name]
		if !named || !has || declares && (declaredCount > 0 || declaredCount == liveCount) {
			continue // declared, or nothing live to keep
		}
		f = maps.Clone(f)
		f["count"] = liveCount
		out[i], changed = f, true
	}
	if !changed {
		return source
	}
	source = maps.Clone(source)
	if text {
		b, _ := json.Marshal(out)
		source["fields"] = string(b)
	} else {
		source["fields"] = out
	}
	return source
}

// number is v as a float64, when it is a number (decoded JSON, or an
// HCL number as the schema gives it).
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case int64:
		return float64(n), true
	case int:
		return float64(n), true
	}
	return 0, false
}

// jsonList is v as a list: v itself, or the list its JSON text holds
// (text true).
func jsonList(v any) (list []any, text bool) {
	switch x := v.(type) {
	case []any:
		return x, false
	case string:
		_ = json.Unmarshal([]byte(x), &list)
		return list, true
	}
	return nil, false
}
