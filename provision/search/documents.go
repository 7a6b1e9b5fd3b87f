package search

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/elastic/go-elasticsearch/v7"
	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision"
	"github.com/provision-dev/provision/provision/adapter"
	"github.com/provision-dev/provision/provision/addrs"
	"github.com/provision-dev/provision/provision/parallel"
	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/schema"
)

// Documents are the dashboard tool's saved objects, one more kind of
// object of this backend: read with the indices (one _mget of every
// declared or named id, one search for the project's own), diffed as JSON,
// written each as one conditional item of a _bulk request (create, or
// at the version the plan read; bulk.go), in the order their references
// give, and proved through the tribe node.

// maxContentLength is Elasticsearch's default http.max_content_length.
const maxContentLength = 100 << 20

// markField is the field of a document's source that holds provision's
// ownership marks; every declared type that has declared documents maps
// it (not analyzed), so that the project's documents can be found by a
// term query and the field is never added to a mapping unreviewed.
const markField = MarkField

// markMapping is markField's mapping; with the protection mark's field
// only where a document is protected, so that the mappings of a project
// that protects nothing stay as they were.
func markMapping(protected bool) *Field {
	keyword := func(name string) *Field {
		return &Field{Name: name, Params: map[string]any{"type": "string", "index": "not_analyzed"}}
	}
	f := &Field{Name: markField, Params: map[string]any{}, Properties: []*Field{keyword(adapter.ManagedByKey), keyword(adapter.ProjectKey)}}
	if protected {
		f.Properties = append(f.Properties, keyword(adapter.ProtectedKey))
	}
	return f
}

// withMarkFields returns ix with markField added to each type that docs
// write into; ix itself when none.
func withMarkFields(ix *IndexDecl, docs []*DocumentDecl) *IndexDecl {
	out := ix
	for i, m := range ix.Mappings {
		mine := func(d *DocumentDecl) bool { return d.Index == ix.Name && d.Type == m.Type }
		if !slices.ContainsFunc(docs, mine) || slices.ContainsFunc(m.Properties, func(f *Field) bool { return f.Name == markField }) {
			continue
		}
		if out == ix {
			c := *ix
			c.Mappings = slices.Clone(ix.Mappings)
			out = &c
		}
		mc := *m
		protected := slices.ContainsFunc(docs, func(d *DocumentDecl) bool { return mine(d) && d.Lifecycle.Protects(false) })
		mc.Properties = append(slices.Clone(m.Properties), markMapping(protected))
		out.Mappings[i] = &mc
	}
	return out
}

// liveDoc is a document as _mget or a search answers it.
type liveDoc struct {
	Index   string         `json:"_index"`
	Type    string         `json:"_type"`
	ID      string         `json:"_id"`
	Version int64          `json:"_version"`
	Found   *bool          `json:"found,omitempty"` // _mget only
	Source  map[string]any `json:"_source"`
}

func (l liveDoc) path() string { return l.Index + "/" + l.Type + "/" + l.ID }

// owner is the project whose marks the document carries.
func (l liveDoc) owner() string {
	m, _ := l.Source[markField].(map[string]any)
	return adapter.OwnerOf(m)
}

// protected says whether the document's marks hold the protection.
func (l liveDoc) protected() bool {
	m, _ := l.Source[markField].(map[string]any)
	return adapter.ProtectedBy(m)
}

// sourcePaths are the paths in a document's source that lc ignores; one
// empty path when it ignores the whole source.
func sourcePaths(lc schema.Lifecycle) [][]string {
	if lc.IgnoreAll {
		return [][]string{{}}
	}
	var out [][]string
	for _, p := range lc.Ignore {
		out = append(out, p.Steps[1:]) // every path of a document is under source
	}
	return out
}

// withPath is dst, copied along path, with src's value at path (taken out
// where src has none); the whole of src, less the marks, for an empty
// path. Neither map is changed.
func withPath(dst, src map[string]any, path []string) map[string]any {
	if len(path) == 0 {
		out := maps.Clone(src)
		delete(out, markField)
		return out
	}
	out := maps.Clone(dst)
	if out == nil {
		out = map[string]any{}
	}
	k := path[0]
	if len(path) == 1 {
		if v, ok := src[k]; ok {
			out[k] = v
		} else {
			delete(out, k)
		}
		return out
	}
	sub, _ := out[k].(map[string]any)
	live, _ := src[k].(map[string]any)
	out[k] = withPath(sub, live, path[1:])
	return out
}

// keepIgnored is the declared source with the live values at the paths
// lc ignores: what the diff then leaves alone and a write merges in.
func keepIgnored(source map[string]any, live liveDoc, exists bool, lc schema.Lifecycle) map[string]any {
	if !exists {
		return source
	}
	for _, p := range sourcePaths(lc) {
		source = withPath(source, live.Source, p)
	}
	return source
}

// document is the document at path as the plan read it: declared, named
// or the project's own; zero when it read none.
func (f facts) document(path string) liveDoc {
	if d, ok := f.Documents[path]; ok {
		return d
	}
	i := slices.IndexFunc(f.Owned, func(d liveDoc) bool { return d.path() == path })
	if i < 0 {
		return liveDoc{}
	}
	return f.Owned[i]
}

// docPath is a document's path in a request: /<index>/<type>/<id>.
func docPath(index, typ, id string) string {
	return "/" + url.PathEscape(index) + "/" + url.PathEscape(typ) + "/" + url.PathEscape(id)
}

// docAddr is the address of a document of this cluster.
func (t target) docAddr(path string) addrs.Addr {
	return addrs.Addr{In: t.in, Kind: Document, Name: path}
}

// documentsRead says whether a plan reads documents: some are declared,
// or an index in scope maps markField (the project may own documents
// that are no longer declared).
func (t target) documentsRead(f facts) bool {
	if len(t.documents) > 0 || slices.ContainsFunc(t.generate, func(im *schema.Import) bool { return im.Kind == Document }) {
		return true
	}
	for _, ix := range f.Indices {
		for _, m := range ix.Mappings {
			if _, ok := m.Properties[markField]; ok {
				return true
			}
		}
	}
	return false
}

// readDocuments reads, in three requests whatever their number and side
// by side, the declared documents and the ones they name (by _mget, which
// is real time), the project's own documents in the indices in scope (a
// search, which sees what was written up to a second before, the
// index's refresh interval: a document created and undeclared within
// that second is deleted by the next plan), and the project's records of
// its documents (the _mget also reads any project's record of each
// declared document); then, in one more _mget, the recorded documents
// neither read (those a save in the tool took the marks off). Each writes
// its own part of f.
func (b *Backend) readDocuments(ctx context.Context, f *facts) error {
	if !b.documentsRead(*f) {
		return nil
	}
	records := map[string]docRecord{}
	if err := parallel.All(ctx, func(ctx context.Context) error { return b.readDeclared(ctx, f, records) },
		func(ctx context.Context) error { return b.readOwned(ctx, f) },
		func(ctx context.Context) error { return b.readRecords(ctx, f) }); err != nil {
		return err
	}
	maps.Copy(f.Records, records) // readRecords made the map
	return b.readRecorded(ctx, f)
}

// readRecorded adds to f.Owned the documents the project's records name
// in the indices in scope that the search by marks did not find: read
// already (declared) or, all in one _mget, now. One its record no longer
// names (made again by hand) is left out.
func (b *Backend) readRecorded(ctx context.Context, f *facts) error {
	have := map[string]bool{}
	for _, d := range f.Owned {
		have[d.path()] = true
	}
	inScope := map[string]bool{}
	for _, name := range b.scope.Indices {
		_, red := f.Red[name]
		_, exists := f.Indices[name]
		inScope[name] = exists && !red
	}
	var missing []docRef
	for _, path := range slices.Sorted(maps.Keys(f.Records)) {
		r := f.Records[path]
		if r.Project != b.project || have[path] || !inScope[r.Index] {
			continue
		}
		if d, ok := f.Documents[path]; ok {
			if f.owner(d) == b.project {
				d.Found = nil
				f.Owned = append(f.Owned, d)
			}
			continue
		}
		missing = append(missing, docRef{r.Index, r.Type, r.ID})
	}
	if len(missing) > 0 {
		docs, err := b.mget(ctx, b.es, missing)
		if err != nil {
			return err
		}
		for i, d := range docs {
			switch {
			case d.Found == nil || !*d.Found:
				// Deleted outside provision: its record is deleted, so
				// that it owns nothing made at that path later.
				f.Gone = append(f.Gone, missing[i].Index+"/"+missing[i].Type+"/"+missing[i].ID)
			case f.owner(d) == b.project:
				d.Found = nil
				f.Owned = append(f.Owned, d)
			}
		}
	}
	sort.Slice(f.Owned, func(i, j int) bool { return f.Owned[i].path() < f.Owned[j].path() })
	return nil
}

// readDeclared reads the declared documents and the ones they name
// (f.Documents), and the records of the declared ones, any project's
// (records).
func (b *Backend) readDeclared(ctx context.Context, f *facts, records map[string]docRecord) error {
	f.Documents = map[string]liveDoc{}
	var ids []docRef
	seen := map[docRef]bool{}
	add := func(r docRef) {
		if _, exists := f.Indices[r.Index]; exists && !seen[r] {
			seen[r] = true
			ids = append(ids, r)
		}
	}
	for _, im := range b.generate {
		if im.Kind == Document {
			add(splitDocPath(im.Name))
		}
	}
	for _, r := range b.removed {
		add(r)
	}
	for _, path := range b.declaredRecords(f.Indices) {
		ids = append(ids, recordRef(path))
	}
	for _, d := range b.documents {
		add(docRef{d.Index, d.Type, d.ID})
		for _, r := range d.Refs {
			for _, t := range r.Types {
				add(docRef{d.Index, t, r.ID})
			}
		}
	}
	if len(ids) > 0 {
		docs, err := b.mget(ctx, b.es, ids)
		if err != nil {
			return err
		}
		for _, d := range docs {
			switch {
			case d.Found == nil || !*d.Found:
			case d.Index == recordIndex:
				var r docRecord
				if json.Unmarshal(adapter.RawJSON(d.Source), &r) == nil && r.path() == d.ID {
					records[d.ID] = r
				}
			default:
				f.Documents[d.path()] = d
			}
		}
	}
	return nil
}

// readOwned reads the project's own documents in the indices in scope
// (f.Owned), but those of a red index, which a search cannot answer
// whole (the plan says the index is red, and refuses to write into it).
func (b *Backend) readOwned(ctx context.Context, f *facts) error {
	var indices []string
	for _, name := range b.scope.Indices {
		_, red := f.Red[name]
		if _, exists := f.Indices[name]; exists && !red {
			indices = append(indices, name)
		}
	}
	owned, err := b.ownedIn(ctx, indices)
	f.Owned = append(f.Owned, owned...)
	return err
}

// ownedIn searches indices for the project's own documents, in the order
// of their paths.
func (b *Backend) ownedIn(ctx context.Context, indices []string) ([]liveDoc, error) {
	if len(indices) == 0 {
		return nil, nil
	}
	var found struct {
		Hits struct {
			Total int       `json:"total"`
			Hits  []liveDoc `json:"hits"`
		} `json:"hits"`
	}
	query := map[string]any{"size": 10000, "version": true,
		"query": map[string]any{"term": map[string]any{markField + "." + adapter.ProjectKey: b.project}}}
	if err := b.post(ctx, b.es, "/"+strings.Join(indices, ",")+"/_search?ignore_unavailable=true", query, &found); err != nil {
		return nil, err
	}
	if found.Hits.Total > len(found.Hits.Hits) {
		return nil, fmt.Errorf("the project owns %d documents in %s, more than one search answers (%d): split them over projects", found.Hits.Total, strings.Join(indices, ", "), len(found.Hits.Hits))
	}
	var owned []liveDoc
	for _, d := range found.Hits.Hits {
		if d.owner() == b.project {
			owned = append(owned, d)
		}
	}
	sort.Slice(owned, func(i, j int) bool { return owned[i].path() < owned[j].path() })
	return owned, nil
}

// readHeld reads the project's protected documents in the owned indices
// no block declares (f.Held), by their marks or the project's records: a
// plan that deletes such an index is refused while it holds one.
func (b *Backend) readHeld(ctx context.Context, f *facts) error {
	owned, err := b.ownedIn(ctx, f.Undeclared)
	if err == nil && f.Records == nil { // the documents were not read
		err = b.readRecords(ctx, f)
	}
	held := func(index, doc string) {
		if f.Held == nil {
			f.Held = map[string][]string{}
		}
		if !slices.Contains(f.Held[index], doc) {
			f.Held[index] = append(f.Held[index], doc)
		}
	}
	for _, d := range owned {
		if f.protected(d) {
			held(d.Index, d.Type+"/"+d.ID)
		}
	}
	// A protected document the tool saved (no marks) is held by its
	// record alone: refusing the index's delete is the safe side.
	for _, path := range slices.Sorted(maps.Keys(f.Records)) {
		if r := f.Records[path]; r.Project == b.project && r.Protected && slices.Contains(f.Undeclared, r.Index) {
			held(r.Index, r.Type+"/"+r.ID)
		}
	}
	return err
}

// mget reads the documents refs names from c, in real time, in one
// _mget: one answer each, in their order (found or not).
func (b *Backend) mget(ctx context.Context, c *elasticsearch.Client, refs []docRef) ([]liveDoc, error) {
	var got struct {
		Docs []liveDoc `json:"docs"`
	}
	err := b.post(ctx, c, "/_mget", map[string]any{"docs": refs}, &got)
	return got.Docs, err
}

// post sends a read with a JSON body (_mget, _search), retried as reads
// are, and decodes the answer into v.
func (b *Backend) post(ctx context.Context, c *elasticsearch.Client, path string, body, v any) error {
	var out []byte
	err := b.net.Call(ctx, true, func(ctx context.Context) error {
		var err error
		out, err = b.perform(ctx, c, plans.Request{Method: http.MethodPost, Path: path, Header: jsonBody, Body: adapter.RawJSON(body)}, 64<<20)
		return err
	})
	if err != nil {
		return fmt.Errorf("POST %s: %w", path, err)
	}
	return json.Unmarshal(out, v)
}

// docView is a document's source as a plan shows and compares it: the
// marks left out, and the fields that hold JSON text decoded, so that a
// change shows as paths inside them and key order or spacing is none.
func docView(source map[string]any, jsonFields []string) map[string]any {
	out := map[string]any{}
	for k, v := range source {
		if k != markField {
			out[k] = v
		}
	}
	out = decodeJSONText("", out, jsonFields).(map[string]any)
	// One JSON form for numbers on both sides: what encoding and decoding
	// the source again would give, without doing it where the walk can.
	if norm, ok := decoded(out); ok {
		return norm.(map[string]any)
	}
	var norm map[string]any
	_ = json.Unmarshal(adapter.RawJSON(out), &norm)
	return norm
}

// decoded is v as encoding/json would decode its encoding: an int64 a
// float64, a nil map or slice nil. ok is false for what the walk does not
// know to give the same as the round trip (a string that is not UTF-8,
// which the encoding replaces; a number that does not encode; another
// type).
func decoded(v any) (any, bool) {
	switch x := v.(type) {
	case nil, bool:
		return x, true
	case string:
		return x, utf8.ValidString(x)
	case float64:
		return x, !math.IsInf(x, 0) && !math.IsNaN(x)
	case int64:
		return float64(x), true
	case map[string]any:
		if x == nil {
			return nil, true
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			d, ok := decoded(e)
			if !ok || !utf8.ValidString(k) {
				return nil, false
			}
			out[k] = d
		}
		return out, true
	case []any:
		if x == nil {
			return nil, true
		}
		out := make([]any, len(x))
		for i, e := range x {
			d, ok := decoded(e)
			if !ok {
				return nil, false
			}
			out[i] = d
		}
		return out, true
	}
	return nil, false
}

// decodeJSONText decodes the JSON text of the string fields at the given
// dotted paths, and of any field the dashboard tool stores as JSON text.
func decodeJSONText(path string, v any, jsonFields []string) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			p := k
			if path != "" {
				p = path + "." + k
			}
			out[k] = decodeJSONText(p, e, jsonFields)
		}
		return out
	case string:
		if slices.Contains(jsonFields, path) || slices.Contains(JSONTextFields, path[strings.LastIndex(path, ".")+1:]) {
			var decoded any
			if json.Unmarshal([]byte(x), &decoded) == nil {
				return decoded
			}
		}
	}
	return v
}

// docBody is what a write sends: the source and the marks.
func (t target) docBody(source map[string]any, protect bool) map[string]any {
	body := maps.Clone(source)
	body[markField] = adapter.Marks(t.project, protect)
	return body
}

// fresh are the project's own documents as found by their search, but
// those a removed block names as read in real time (_mget), as declared
// ones are: the search sees writes up to a second late, and a forget or
// a delete writes at the version it read. One the real-time read does
// not find is gone.
func (t target) fresh(f facts) []liveDoc {
	if len(t.removed) == 0 {
		return f.Owned
	}
	removed := make(map[docRef]bool, len(t.removed))
	for _, r := range t.removed {
		removed[r] = true
	}
	out := make([]liveDoc, 0, len(f.Owned))
	for _, live := range f.Owned {
		if !removed[docRef{live.Index, live.Type, live.ID}] {
			out = append(out, live)
		} else if d, ok := f.Documents[live.path()]; ok {
			out = append(out, d)
		}
	}
	return out
}

// documentObjects are the declared documents and the project's own
// (fresh: f.Owned, t.fresh), as the engine walks them
// (provision.Objects), once indices are what the plan does to each index: a document of an index that is refused is not
// planned, and one of an index that is deleted is not deleted apart.
func (t target) documentObjects(f facts, fresh []liveDoc, indices []*plans.Change) provision.Objects {
	planned := map[string]plans.Action{}
	for _, c := range indices {
		planned[c.Addr.Name] = c.Action
	}
	declared := map[string]bool{}
	var owned []string
	for _, d := range t.documents {
		declared[d.Path()] = true
		if live, ok := f.Documents[d.Path()]; ok && f.owner(live) == t.project && planned[d.Index] != plans.Delete {
			owned = append(owned, d.Path())
		}
	}
	// removing are the project's documents no longer declared, which this
	// plan deletes or forgets (not those of an index it deletes); a
	// forgotten one stays live for the references to it (deleting).
	removing := map[string]liveDoc{}
	deleting := map[string]bool{}
	for _, live := range fresh {
		if path := live.path(); !declared[path] && planned[live.Index] != plans.Delete {
			owned, removing[path] = append(owned, path), live
			if r := t.cfg.RemovedOf(Document, path); r == nil || r.Destroy {
				deleting[path] = true
			}
		}
	}
	slices.Sort(owned)
	return provision.Objects{
		Kind:     Document,
		Declared: schema.Declarations(t.documents),
		Owned:    owned,
		Plan: func(i int) (*plans.Change, hcl.Diagnostics) {
			return t.planDocument(t.documents[i], f, planned, deleting)
		},
		Gone: func(path string, i int) provision.Gone {
			live, jsonFields := removing[path], []string(nil)
			if i >= 0 {
				live, jsonFields = f.Documents[path], t.documents[i].JSONFields
			}
			return t.goneDocument(f, live, jsonFields)
		},
	}
}

// orderDeletes makes, among changes, the delete of a document that another
// one deleted names wait for that one's (a dashboard is deleted before
// its visualizations): fresh are the project's documents, whose sources
// name the others.
func orderDeletes(fresh []liveDoc, changes []*plans.Change) {
	removed := map[string]*plans.Change{}
	for _, c := range changes {
		if c.Addr.Kind == Document && (c.Action == plans.Delete || c.Action == plans.Forget) {
			removed[c.Addr.Name] = c
		}
	}
	for _, live := range fresh {
		if c := removed[live.path()]; c != nil && c.Action == plans.Delete {
			for _, r := range SourceRefs(live.Source) {
				for _, typ := range r.Types {
					if named := removed[live.Index+"/"+typ+"/"+r.ID]; named != nil {
						named.Needs = append(named.Needs, c.Addr)
					}
				}
			}
		}
	}
}

// recordsGone are the forgets of the records of the documents deleted
// outside provision.
func (t target) recordsGone(f facts) []*plans.Change {
	var gone []*plans.Change
	for _, path := range f.Gone {
		c := &plans.Change{Addr: t.docAddr(path), Backend: t.backend, Action: plans.Forget, Before: plans.ViewOf(json.RawMessage("null")), After: plans.ViewOf(json.RawMessage("null")),
			Requests: []plans.Request{unrecordItem(path)}}
		c.Because(plans.ReasonGone, "the document was deleted outside provision; its ownership record is deleted")
		gone = append(gone, c)
	}
	return gone
}

// planDocument is the change of one declared document: none when its
// index is refused or deleted. deleting are the documents the plan
// deletes.
func (t target) planDocument(d *DocumentDecl, f facts, planned map[string]plans.Action, deleting map[string]bool) (*plans.Change, hcl.Diagnostics) {
	if action, ok := planned[d.Index]; !ok || action == plans.Delete {
		return nil, nil // its index is refused, or deleted
	}
	live, exists := f.Documents[d.Path()]
	diags := t.liveRefs(d, f, deleting)
	declared := keepToolState(d.Type, keepIgnored(d.Source, live, exists, d.Lifecycle), live, exists)
	after := docView(declared, d.JSONFields)
	protect := d.Lifecycle.Protects(exists && f.protected(live))
	source := t.docBody(declared, protect)
	ref := docRef{d.Index, d.Type, d.ID}
	write := func() []plans.Request {
		return []plans.Request{bulkItem("index", ref, live.Version, source), t.recordItem(ref, live.Version+1, protect)}
	}
	// The record a document the project owns lacks (one written before
	// records, or whose record was lost) is written by itself, at the
	// document's version.
	record, recorded := f.Records[d.Path()]
	unrecorded := exists && (!recorded || record.Version > live.Version || record.Protected != protect)
	// same: the live document is the declared one (less the marks), so
	// its view is the change's before and its size is one the cluster
	// took: worked out once, not again for the check, the diff and the
	// view.
	same := exists && reflect.DeepEqual(docView(live.Source, d.JSONFields), after)
	dc, ddiags := adapter.Propose(t.project, adapter.Object{
		Declared: adapter.Declared{Addr: t.docAddr(d.Path()), Subject: d.IDRange.Ptr(), Context: d.DeclRange.Ptr(), Import: d.Import.At(), Lifecycle: d.Lifecycle},
		EachKey:  d.Instance.KeyPtr(),
		After:    func() json.RawMessage { return adapter.RawJSON(after) },
		Live:     adapter.LiveObject{Exists: exists, Owner: f.owner(live), Protected: exists && f.protected(live), What: fmt.Sprintf("version %d on cluster %s", live.Version, f.ClusterName)},
		Check: func() hcl.Diagnostics {
			if same {
				return nil
			}
			if body := adapter.RawJSON(source); len(body) > maxContentLength {
				return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Document too large",
					Detail:  fmt.Sprintf("The document's body is %d bytes; Elasticsearch refuses a request body over http.max_content_length (100mb by default) with 413.", len(body)),
					Subject: d.SourceRange.Ptr(), Context: d.DeclRange.Ptr()}}
			}
			return nil
		},
		Create: func() []plans.Request {
			return []plans.Request{bulkItem("create", ref, 0, source), t.recordItem(ref, 1, protect)}
		},
		Before:   func() json.RawMessage { return adapter.RawJSON(docView(live.Source, d.JSONFields)) },
		SameView: true,
		Diff: func(importing bool) adapter.Diff {
			var diff adapter.Diff
			if !importing {
				// A protection the marks hold otherwise is written by the
				// whole write (Mark), record and all.
				if same && unrecorded && (live.owner() == "" || live.protected() == protect) {
					diff.Reasons = []adapter.Reason{{Code: plans.ReasonChanged, Words: "its ownership record is written"}}
					diff.Requests = []plans.Request{t.recordItem(ref, live.Version, protect)}
					return diff
				}
				if same {
					return diff
				}
				diff.Reasons = []adapter.Reason{{Code: plans.ReasonChanged, Words: "its source differs from the declared one"}}
			}
			diff.Requests = write()
			return diff
		},
		Mark:     write,
		Imported: "made outside provision; the ownership marks go into its source",
	})
	diags = append(diags, ddiags...)
	if dc != nil {
		dc.Needs = []addrs.Addr{t.addr(d.Index)}
		for _, n := range d.Needs {
			dc.Needs = append(dc.Needs, t.docAddr(n.Path()))
		}
	}
	return dc, diags
}

// docRef names one document, as _mget takes it.
type docRef struct {
	Index string `json:"_index"`
	Type  string `json:"_type"`
	ID    string `json:"_id"`
}

// splitDocPath reads <index>/<type>/<id> (an address's name; the id may
// hold "/").
func splitDocPath(path string) docRef {
	parts := append(strings.SplitN(path, "/", 3), "", "")
	return docRef{parts[0], parts[1], parts[2]}
}

// goneDocument deletes one of the project's documents, at the version
// the plan read, or forgets it (written again at that version without
// its marks, when it has them), after the project's record of it is
// deleted.
func (t target) goneDocument(f facts, live liveDoc, jsonFields []string) provision.Gone {
	ref := docRef{live.Index, live.Type, live.ID}
	unrecord := unrecordItem(live.path())
	return provision.Gone{Addr: t.docAddr(live.path()), Before: adapter.RawJSON(docView(live.Source, jsonFields)),
		// The record goes first: a failure after it leaves the document
		// nobody's (kept), never recorded with nothing of provision's.
		Delete: []plans.Request{unrecord, bulkItem("delete", ref, live.Version, nil)},
		Forget: func() []plans.Request {
			if live.owner() == "" {
				return []plans.Request{unrecord} // no marks to take off
			}
			return []plans.Request{unrecord, bulkItem("index", ref, live.Version, withPath(nil, live.Source, nil))}
		},
		Protected: f.protected(live),
	}
}

// liveRefs checks the references that name no declared document: each
// must name a live one, of a type it may be, that this plan does not
// delete. A reference to nothing that the live document already holds in
// the same field (an estate taken over as it is) is a warning: the tool
// shows it broken today, and the plan neither repairs nor drops it. One
// that the plan would write (a new document, or a field it changes) is an
// error.
func (t target) liveRefs(d *DocumentDecl, f facts, removing map[string]bool) hcl.Diagnostics {
	var diags hcl.Diagnostics
	live, exists := f.Documents[d.Path()]
	var already []Ref
	if exists {
		already = SourceRefs(live.Source)
	}
	for _, r := range d.Refs {
		if slices.ContainsFunc(d.Needs, func(n *DocumentDecl) bool { return n.ID == r.ID && slices.Contains(r.Types, n.Type) }) {
			continue
		}
		if slices.ContainsFunc(r.Types, func(typ string) bool {
			_, ok := f.Documents[d.Index+"/"+typ+"/"+r.ID]
			return ok && !removing[d.Index+"/"+typ+"/"+r.ID]
		}) {
			continue
		}
		if slices.ContainsFunc(already, func(l Ref) bool { return l.ID == r.ID && l.Field == r.Field }) {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagWarning,
				Summary:  "Reference to a document that does not exist, already live",
				Detail: fmt.Sprintf("%s of %s names the %s %q, which no document block declares and which %s does not hold on cluster %s. The live document names it already, so the dashboard tool shows it broken today; the plan keeps the reference as it is and goes on. Declare the %s, or name one that exists, to repair it.",
					r.Field, t.docAddr(d.Path()), strings.Join(r.Types, " or "), r.ID, d.Index, f.ClusterName, strings.Join(r.Types, " or ")),
				Subject: r.Range.Ptr(),
				Context: d.DeclRange.Ptr(),
			})
			continue
		}
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Reference to a document that does not exist",
			Detail: fmt.Sprintf("%s names the %s %q, which no document block declares and which %s does not hold on cluster %s, or which the project owns and no longer declares (this plan would delete it). The dashboard tool would show a broken object. Declare it, or name one that exists.",
				r.Field, strings.Join(r.Types, " or "), r.ID, d.Index, f.ClusterName),
			Subject: r.Range.Ptr(),
			Context: d.DeclRange.Ptr(),
		})
	}
	return diags
}

// documentChanged turns Elasticsearch's 409 to a conditional write (op:
// create, index or delete) into the refusal a person needs: which
// document, and what changed since the plan read it (st, when known).
// Nothing was written to it.
func (b *Backend) documentChanged(ctx context.Context, st plans.State, op string, ref docRef, err error) error {
	path := docPath(ref.Index, ref.Type, ref.ID)
	if op == "create" {
		return fmt.Errorf("the document %s was created by someone else after the plan read that it did not exist; nothing was written to it. Plan again: %w", path, err)
	}
	var now liveDoc
	what := "it"
	var gone *adapter.StatusError
	if gerr := b.get(ctx, b.es, path, &now); errors.As(gerr, &gone) && gone.Code == http.StatusNotFound {
		return fmt.Errorf("the document %s was deleted since the plan read it; nothing was written. Plan again: %w", path, err)
	} else if gerr == nil {
		f, _ := st.(facts)
		before := f.document(ref.Index + "/" + ref.Type + "/" + ref.ID)
		changed := changedPaths("", docView(before.Source, nil), docView(now.Source, nil))
		what = fmt.Sprintf("version %d to %d", before.Version, now.Version)
		if len(changed) > 0 {
			what += ", " + strings.Join(changed, ", ") + " changed"
		}
	}
	return fmt.Errorf("the document %s was changed since the plan read it (%s); nothing was written to it, and the change made by hand is kept. Plan again to see it: %w", path, what, err)
}

// changedPaths are the dotted paths where two views differ.
func changedPaths(path string, a, b any) []string {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if !aok || !bok {
		if reflect.DeepEqual(a, b) {
			return nil
		}
		if path == "" {
			path = "the source"
		}
		return []string{path}
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(merged(am, bm))) {
		p := k
		if path != "" {
			p = path + "." + k
		}
		out = append(out, changedPaths(p, am[k], bm[k])...)
	}
	return out
}

func merged(a, b map[string]any) map[string]any {
	out := maps.Clone(a)
	maps.Copy(out, b)
	return out
}

// verifyDocuments reads every written document back through the tribe
// node, in one _mget, and checks that it is served there as written.
func (b *Backend) verifyDocuments(ctx context.Context, changes []*plans.Change) (string, error) {
	written := map[string]map[string]any{}
	var ids []docRef
	for _, c := range changes {
		if c.Addr.Kind != Document || c.Action == plans.Delete || len(c.Requests) == 0 || isRecordItem(c.Requests[0]) {
			continue // deleted, or only its record written
		}
		var body map[string]any
		if lines := itemLines(c.Requests[0]); len(lines) == 2 {
			_ = json.Unmarshal(lines[1], &body)
		}
		written[c.Addr.Name] = body
		ids = append(ids, splitDocPath(c.Addr.Name))
	}
	if len(ids) == 0 {
		return "", nil
	}
	docs, err := b.mget(ctx, b.tribe, ids)
	if err != nil {
		return "", fmt.Errorf("reading the written documents through the tribe node %s: %w", b.scope.TribeURL, err)
	}
	var wrong []string
	for _, d := range docs {
		switch {
		case d.Found == nil || !*d.Found:
			wrong = append(wrong, d.path()+" is not served")
		case !reflect.DeepEqual(docView(d.Source, nil), docView(written[d.path()], nil)) || d.owner() != b.project:
			wrong = append(wrong, d.path()+" is served with another source (another member's copy of the index, or an edit since)")
		}
	}
	if len(wrong) > 0 {
		return "", fmt.Errorf("through the tribe node %s, %s", b.scope.TribeURL, strings.Join(wrong, "; "))
	}
	verb := "are"
	if len(ids) == 1 {
		verb = "is"
	}
	return fmt.Sprintf("%s: %d %s %s served through the tribe node %s as written.", b.target.backend, len(ids), plans.Plural(len(ids), "document"), verb, b.scope.TribeURL), nil
}
