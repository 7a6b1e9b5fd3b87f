package search

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/provision-dev/provision/provision/plans"
)

// Converge is the cluster's state once changes are done, as Elasticsearch
// 2.4 answers a plan's reads after them: an index created with its first
// type's _meta, mappings merged field by field (a PUT of a type's mapping
// adds fields and keeps the others), settings set, documents written at
// the next version, deletes gone.
func (b *Backend) Converge(st plans.State, changes []*plans.Change) (plans.State, error) {
	f := st.(facts)
	next := f
	next.Indices = cloned(f.Indices)
	next.Documents = maps.Clone(f.Documents)
	next.Owned = slices.Clone(f.Owned)
	next.Undeclared = slices.Clone(f.Undeclared)
	next.UndeclaredMarks = maps.Clone(f.UndeclaredMarks)
	next.Held = maps.Clone(f.Held)
	next.Records = maps.Clone(f.Records)
	next.Gone = slices.Clone(f.Gone)
	for _, c := range changes {
		for _, r := range c.Requests {
			if err := next.apply(r, b.project); err != nil {
				return nil, fmt.Errorf("%s: %s %s: %w", c.Addr, r.Method, r.Path, err)
			}
		}
	}
	return next, nil
}

// apply does one request to the state.
func (f *facts) apply(r plans.Request, project string) error {
	path, _, _ := strings.Cut(r.Path, "?")
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case r.Batch:
		return f.applyItem(r, project)
	case r.Method == "POST" && path == "/_bulk":
		// The records of a deleted index's documents (dropIndex).
		var text string
		if err := json.Unmarshal(r.Body, &text); err != nil {
			return err
		}
		for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
			var action map[string]bulkAction
			if err := json.Unmarshal([]byte(line), &action); err != nil {
				return err
			}
			for op, a := range action {
				f.applyRecord(op, docRef{a.Index, a.Type, a.ID}, nil)
			}
		}
	case r.Method == "DELETE" && len(parts) == 1:
		delete(f.Indices, parts[0])
		delete(f.UndeclaredMarks, parts[0])
		delete(f.Held, parts[0])
		f.Undeclared = slices.DeleteFunc(f.Undeclared, func(n string) bool { return n == parts[0] })
		drop := func(d liveDoc) bool { return d.Index == parts[0] }
		f.Owned = slices.DeleteFunc(f.Owned, drop)
		maps.DeleteFunc(f.Documents, func(_ string, d liveDoc) bool { return drop(d) })
	case r.Method == "PUT" && len(parts) == 1:
		var body struct {
			Mappings map[string]liveType `json:"mappings"`
			Settings map[string]any      `json:"settings"`
		}
		if err := json.Unmarshal(r.Body, &body); err != nil {
			return err
		}
		f.Indices[parts[0]] = liveIndex{Mappings: body.Mappings, Settings: withSettings(nil, body.Settings)}
	case r.Method == "PUT" && len(parts) == 3 && parts[1] == "_mapping":
		var body map[string]liveType
		if err := json.Unmarshal(r.Body, &body); err != nil {
			return err
		}
		if marks, ok := f.UndeclaredMarks[parts[0]]; ok {
			// A forget: the _meta of an undeclared index's type, replaced.
			marks.Mappings = cloned(marks.Mappings)
			for typ, m := range body {
				marks.Mappings[typ] = liveType{Meta: m.Meta}
			}
			f.UndeclaredMarks[parts[0]] = marks
			if indexOwner(marks, project) != project {
				f.Undeclared = slices.DeleteFunc(f.Undeclared, func(n string) bool { return n == parts[0] })
				delete(f.UndeclaredMarks, parts[0])
				delete(f.Held, parts[0])
			}
			return nil
		}
		ix := f.Indices[parts[0]]
		ix.Mappings = cloned(ix.Mappings)
		for typ, m := range body {
			old := ix.Mappings[typ]
			m.Properties = mergeFields(old.Properties, m.Properties)
			ix.Mappings[typ] = m
		}
		f.Indices[parts[0]] = ix
	case r.Method == "PUT" && len(parts) == 2 && parts[1] == "_settings":
		var body map[string]any
		if err := json.Unmarshal(r.Body, &body); err != nil {
			return err
		}
		ix := f.Indices[parts[0]]
		ix.Settings = withSettings(ix.Settings, body)
		f.Indices[parts[0]] = ix
	default:
		return fmt.Errorf("no request this backend plans")
	}
	return nil
}

// withSettings is settings with add set, as Elasticsearch answers them
// (flat, as text).
func withSettings(settings, add map[string]any) map[string]any {
	out := cloned(settings)
	for k, v := range add {
		out[k] = fmt.Sprint(v)
	}
	return out
}

// cloned is a copy of m, never nil.
func cloned[K comparable, V any](m map[K]V) map[K]V {
	out := make(map[K]V, len(m))
	maps.Copy(out, m)
	return out
}

// applyItem does one _bulk item: create, index (the next version) or
// delete, of a document or of the project's record of one.
func (f *facts) applyItem(r plans.Request, project string) error {
	lines := itemLines(r)
	op, a := itemAction(r)
	if op == "" {
		return fmt.Errorf("a batch item without an action")
	}
	var source map[string]any
	if len(lines) > 1 {
		if err := json.Unmarshal(lines[1], &source); err != nil {
			return err
		}
	}
	if a.Index == recordIndex {
		f.applyRecord(op, a, source)
		return nil
	}
	path := a.Index + "/" + a.Type + "/" + a.ID
	owned := func(d liveDoc) bool { return d.path() == path }
	f.Owned = slices.DeleteFunc(f.Owned, owned)
	if op == "delete" {
		delete(f.Documents, path)
		return nil
	}
	found := true
	d := liveDoc{Index: a.Index, Type: a.Type, ID: a.ID, Version: f.document(path).Version + 1, Found: &found, Source: source}
	if f.Documents == nil {
		f.Documents = map[string]liveDoc{}
	}
	f.Documents[path] = d
	if f.owner(d) == project {
		d.Found = nil
		f.Owned = append(f.Owned, d)
	}
	return nil
}

// applyRecord does one item of the records, whose id is the document's
// path: the record written (its document then its project's, at the
// version it names) or deleted.
func (f *facts) applyRecord(op string, ref docRef, source map[string]any) {
	path := ref.ID
	f.Gone = slices.DeleteFunc(f.Gone, func(p string) bool { return p == path })
	if op == "delete" {
		delete(f.Records, path)
		f.Owned = slices.DeleteFunc(f.Owned, func(d liveDoc) bool { return d.path() == path && d.owner() == "" })
		return
	}
	doc := splitDocPath(path)
	project, _ := source["project"].(string)
	version, _ := source["version"].(float64)
	protected, _ := source["protected"].(bool)
	if f.Records == nil {
		f.Records = map[string]docRecord{}
	}
	f.Records[path] = docRecord{Project: project, Index: doc.Index, Type: doc.Type, ID: doc.ID, Version: int64(version), Protected: protected}
	if d := f.document(path); d.ID != "" && !slices.ContainsFunc(f.Owned, func(o liveDoc) bool { return o.path() == path }) && f.owner(d) == project {
		d.Found = nil
		f.Owned = append(f.Owned, d)
	}
}

// mergeFields is what a mapping PUT leaves of a type's fields: the old
// ones, with the new ones added or (where updatable) replaced, objects
// merged field by field.
func mergeFields(old, add map[string]liveField) map[string]liveField {
	if old == nil {
		return add
	}
	out := maps.Clone(old)
	for name, f := range add {
		if o, ok := out[name]; ok && o.Properties != nil && f.Properties != nil {
			props := mergeFields(o.Properties, f.Properties)
			f.Properties = props
			if f.raw != nil {
				f.raw = maps.Clone(f.raw)
				raw, _ := json.Marshal(props)
				var m any
				_ = json.Unmarshal(raw, &m)
				f.raw["properties"] = m
			}
		}
		out[name] = f
	}
	return out
}
