package search

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision"
	"github.com/provision-dev/provision/provision/adapter"
	"github.com/provision-dev/provision/provision/addrs"
	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/schema"
)

// facts are what a plan reads from a cluster.
type facts struct {
	Version string `json:"version"`
	// Distribution is version.distribution ("opensearch"; empty for
	// Elasticsearch), Tagline the root's tagline.
	Distribution string `json:"distribution,omitempty"`
	Tagline      string `json:"tagline,omitempty"`
	ClusterName  string `json:"cluster_name"`
	// Tribe maps a tribe node's member names to their cluster names; it is
	// empty for a node of a normal cluster.
	Tribe map[string]string `json:"tribe,omitempty"`
	// Indices holds the declared indices that exist, with their mappings.
	Indices map[string]liveIndex `json:"indices"`
	// Undeclared are the indices the project owns that no block declares,
	// and the _meta of each of their types (UndeclaredMarks, by name).
	Undeclared      []string             `json:"undeclared,omitempty"`
	UndeclaredMarks map[string]liveIndex `json:"undeclared_marks,omitempty"`
	// Held are the project's protected documents in the undeclared
	// indices (<type>/<id>, by index): deleting such an index would
	// delete them.
	Held map[string][]string `json:"held_protected,omitempty"`
	// Red are the indices in scope whose health is red, each with its
	// primary shards that have no copy allocated.
	Red map[string][]int `json:"red,omitempty"`
	// Documents are the declared documents and those they name that
	// exist, by <index>/<type>/<id>; Owned, the project's own documents.
	Documents map[string]liveDoc `json:"documents,omitempty"`
	Owned     []liveDoc          `json:"owned_documents,omitempty"`
	// Records are the records of documents (record.go), by the document's
	// <index>/<type>/<id>: the project's own, and any project's of a
	// declared document. Gone are the documents the project's records name
	// that no longer exist (deleted outside provision).
	Records map[string]docRecord `json:"document_records,omitempty"`
	Gone    []string             `json:"gone_documents,omitempty"`
	// TribeNode is what the tribe node (tribe_url) showed a plan that
	// converges; nil without one.
	TribeNode *tribeRead `json:"tribe_node,omitempty"`
	// Nodes are the declared nodes one by one, when there are several:
	// the cluster each says it belongs to, or why it did not answer.
	Nodes []nodeFact `json:"nodes,omitempty"`
}

// nodeFact is what one declared node of a cluster answered to GET /.
type nodeFact struct {
	URL         string `json:"url"`
	ClusterName string `json:"cluster_name,omitempty"`
	Error       string `json:"error,omitempty"`
}

// Server is the cluster's distribution and version.
func (f facts) Server() string {
	name := "Elasticsearch"
	if f.Distribution != "" {
		name = f.Distribution
	}
	return name + " " + f.Version
}

type liveIndex struct {
	Mappings map[string]liveType `json:"mappings"`
	// Settings are flat ("index.number_of_shards": "5").
	Settings map[string]any `json:"settings,omitempty"`
}

type liveType struct {
	// Meta is the type's _meta; other tools write objects there too.
	Meta       map[string]any       `json:"_meta,omitempty"`
	Properties map[string]liveField `json:"properties,omitempty"`
}

// Known says whether provision knows how this server's version turns
// declarations into mappings.
func (f facts) Known() error {
	if why := unsupported(f); why != "" {
		return fmt.Errorf("provision plans for Elasticsearch 2.x, 5.x, 6.x and 7.x, not %s", why)
	}
	return nil
}

// major is the server's major version, 0 when unknown.
func (f facts) major() int {
	n, _ := strconv.Atoi(strings.SplitN(f.Version, ".", 2)[0])
	return n
}

// indexOwner decides whose an index is, for the index as a whole: the
// project whose marks one of its live types carries in _meta. Types without
// marks, such as those the dashboard tool adds, do not count; another
// project's mark on any type makes the index that project's. An index with
// no marked type (one made by hand, or empty) is nobody's: provision writes
// the marks into the first type's _meta with the PUT that creates an index,
// so an apply that stopped right after creating it leaves an owned index.
func indexOwner(live liveIndex, project string) string {
	owner := ""
	for _, t := range slices.Sorted(maps.Keys(live.Mappings)) {
		switch o := adapter.OwnerOf(live.Mappings[t].Meta); {
		case o == "":
		case o != project:
			return o
		default:
			owner = o
		}
	}
	return owner
}

// indexProtected says whether a type of the live index carries the
// protection with its marks.
func indexProtected(live liveIndex) bool {
	for _, lt := range live.Mappings {
		if adapter.ProtectedBy(lt.Meta) {
			return true
		}
	}
	return false
}

// ignoringSettings is ix less the settings its lifecycle ignores
// (settings, settings["number_of_replicas"]): their live values are kept.
func ignoringSettings(ix *IndexDecl) *IndexDecl {
	if !ix.Lifecycle.IgnoreAll && len(ix.Lifecycle.Ignore) == 0 {
		return ix
	}
	c := *ix
	c.Settings = maps.Clone(ix.Settings)
	maps.DeleteFunc(c.Settings, func(k, _ string) bool {
		return ix.Lifecycle.Ignores("settings", k) || ix.Lifecycle.Ignores("settings", strings.TrimPrefix(k, "index."))
	})
	return &c
}

// target is what a plan works on: one search block and its indices.
type target struct {
	cfg     *schema.Config
	project string
	search  *Search
	indices []*IndexDecl
	backend string
	// in qualifies the addresses of the indices when several search
	// blocks are declared ("search.t1"); empty otherwise.
	in string
	// generate are the imports of indices no block declares, whose
	// declarations plan -generate-config-out writes.
	generate []*schema.Import
	// prune deletes owned indices no longer declared.
	prune bool
	// declared are the names of every index the specs declare, on any
	// search block: another block's index is never "no longer declared".
	declared []string
	// documents are the declared documents of the indices; removed,
	// those removed blocks name.
	documents []*DocumentDecl
	removed   []docRef
	// where names the cluster's nodes, for a person.
	where string
}

// addr is the address of an index of this cluster.
func (t target) addr(name string) addrs.Addr {
	return addrs.Addr{In: t.in, Kind: Index, Name: name}
}

// unassigned names the primary shards of a red index that have no copy.
func unassigned(primaries []int) string {
	switch len(primaries) {
	case 0:
		return "a primary shard has"
	case 1:
		return fmt.Sprintf("its primary shard %d has", primaries[0])
	}
	s := make([]string, len(primaries))
	for i, p := range primaries {
		s[i] = strconv.Itoa(p)
	}
	return fmt.Sprintf("its primary shards %s have", strings.Join(s, ", "))
}

// redIndices tells, once per index, that a declared index is red: an
// error when the plan writes into it (every write would fail, or wait
// out its timeout, for one cause), a warning otherwise.
func (t target) redIndices(f facts, changes []*plans.Change) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, ix := range t.indices {
		primaries, isRed := f.Red[ix.Name]
		if !isRed {
			continue
		}
		writes := 0
		for _, c := range changes {
			if len(c.Requests) > 0 && c.Action != plans.Delete && (c.Addr.Kind == Index && c.Addr.Name == ix.Name || c.Addr.Kind == Document && splitDocPath(c.Addr.Name).Index == ix.Name) {
				writes++
			}
		}
		d := &hcl.Diagnostic{Severity: hcl.DiagWarning, Summary: "Index is red", Subject: ix.NameRange.Ptr(), Context: ix.DeclRange.Ptr(),
			Detail: fmt.Sprintf("The index %q on cluster %s is red: %s no copy allocated (a node that holds it is down, or its allocation cannot be made; GET /_cluster/allocation/explain says why). Reads of it are partial, and writes into it wait until their node returns, then fail.", ix.Name, f.ClusterName, unassigned(primaries))}
		if writes > 0 {
			d.Severity = hcl.DiagError
			d.Detail += fmt.Sprintf(" This plan writes into it (%d %s), so it is refused: bring the index's shards back, then plan again.", writes, plans.Plural(writes, "change"))
		}
		diags = append(diags, d)
	}
	return diags
}

// held are the project's documents in the index name whose marks protect
// them (<type>/<id>): the index's delete would delete them.
func (f facts) held(name string) []string {
	out := slices.Clone(f.Held[name])
	for _, d := range f.Owned {
		if d.Index == name && f.protected(d) {
			out = append(out, d.Type+"/"+d.ID)
		}
	}
	return out
}

// indexObjects are the declared indices and those the project owns, as
// the engine walks them (provision.Objects). An owned index no longer
// declared is kept (it holds data) unless pruned.
func (t target) indexObjects(f facts) provision.Objects {
	owned := slices.Clone(f.Undeclared)
	for _, ix := range t.indices {
		if _, lv := t.liveOf(f, ix.Name); lv.Exists && lv.Owner == t.project {
			owned = append(owned, ix.Name)
		}
	}
	slices.Sort(owned)
	return provision.Objects{
		Kind:     Index,
		Declared: schema.Declarations(t.indices),
		Owned:    owned,
		Plan:     func(i int) (*plans.Change, hcl.Diagnostics) { return t.planIndex(f, t.indices[i]) },
		Gone: func(name string, i int) provision.Gone {
			g := provision.Gone{Addr: t.addr(name), Delete: dropIndex(f, t.project, name)}
			if held := f.held(name); len(held) > 0 {
				g.Holding = fmt.Sprintf("it holds the protected %s %s, which its delete would delete", plans.Plural(len(held), "document"), strings.Join(held, ", "))
			}
			if i >= 0 {
				ix := t.indices[i]
				live, lv := t.liveOf(f, name)
				g.Before, g.Protected = adapter.RawJSON(t.view(liveMappings(ix, live), liveSettings(ix, live))), lv.Protected
				return g
			}
			g.Forget = func() []plans.Request { return forgetIndex(name, f.UndeclaredMarks[name], f.major()) }
			g.Protected = indexProtected(f.UndeclaredMarks[name])
			if !t.prune {
				g.Kept = &hcl.Diagnostic{
					Severity: hcl.DiagWarning,
					Summary:  "Owned index no longer declared",
					Detail: fmt.Sprintf("The index %q on cluster %s is owned by project %s and no longer declared. It is kept (an index holds data): destroy -indices, or apply -prune-indices, deletes it.",
						name, f.ClusterName, t.project),
					Subject: t.search.DeclRange.Ptr(),
				}
			}
			return g
		},
	}
}

// planIndex is the change of one declared index.
func (t target) planIndex(f facts, ix *IndexDecl) (*plans.Change, hcl.Diagnostics) {
	live, lv := t.liveOf(f, ix.Name)
	major, protect := f.major(), ix.Lifecycle.Protects(lv.Protected)
	return adapter.Propose(t.project, adapter.Object{
		Declared: adapter.Declared{Addr: t.addr(ix.Name), Subject: ix.NameRange.Ptr(), Context: ix.DeclRange.Ptr(), Import: ix.Import.At(), Lifecycle: ix.Lifecycle},
		EachKey:  ix.Instance.KeyPtr(),
		After:    func() json.RawMessage { return adapter.RawJSON(t.view(t.declaredMappings(ix, protect), ix.Settings)) },
		Live:     lv,
		Check:    func() hcl.Diagnostics { return versionLimits(ix, live, major) },
		Create: func() []plans.Request {
			out := []plans.Request{t.createIndex(ix, major, protect)}
			for _, m := range ix.Mappings {
				out = append(out, t.putMapping(ix, m, major, nil, protect))
			}
			return out
		},
		Before: func() json.RawMessage {
			return adapter.RawJSON(t.view(liveMappings(ix, live), liveSettings(ix, live)))
		},
		Diff: func(importing bool) adapter.Diff { return t.diffIndex(ix, live, major, importing, protect) },
		Mark: func() []plans.Request {
			var out []plans.Request
			for _, m := range ix.Mappings {
				out = append(out, t.putMapping(ix, m, major, live.Mappings[m.Type].Meta, protect))
			}
			return out
		},
		Imported: "made outside provision; the ownership marks go into each declared type's _meta",
	})
}

// diffIndex compares a live index with its declaration: its settings,
// each declared type's fields, and, for an import, the mappings that put
// the marks in each type's _meta.
func (t target) diffIndex(ix *IndexDecl, live liveIndex, major int, importing, protect bool) adapter.Diff {
	var d adapter.Diff
	if shared := sharedFieldConflicts(ix, live, major); len(shared) > 0 {
		d.Conflicts = shared
		return d
	}
	because := func(code plans.ReasonCode, words string) {
		d.Reasons = append(d.Reasons, adapter.Reason{Code: code, Words: words})
	}
	if changed, conflicts := settingsDiff(ignoringSettings(ix), live); len(conflicts) > 0 {
		d.Conflicts = append(d.Conflicts, conflicts...)
	} else if len(changed) > 0 {
		because(plans.ReasonSettings, "dynamic settings change")
		d.Requests = append(d.Requests, plans.Request{Method: "PUT", Path: "/" + ix.Name + "/_settings", Header: jsonBody, Body: adapter.RawJSON(changed), Idempotent: true})
	}
	for _, m := range ix.Mappings {
		lt, ok := live.Mappings[m.Type]
		if !ok {
			because(plans.ReasonNewType, fmt.Sprintf("type %q is new", m.Type))
			d.Requests = append(d.Requests, t.putMapping(ix, m, major, nil, protect))
			continue
		}
		missing, conflicts, extra := fieldDiff("", m.Properties, lt.Properties, major)
		d.Conflicts = append(d.Conflicts, conflicts...)
		// The protection's field stays mapped once a document was protected.
		extra = slices.DeleteFunc(extra, func(f string) bool { return f == markField+"."+adapter.ProtectedKey })
		if len(extra) > 0 {
			d.Notes = append(d.Notes, fmt.Sprintf("type %q has live fields that are not declared, left alone: %s", m.Type, strings.Join(extra, ", ")))
		}
		switch {
		case missing:
			because(plans.ReasonNewFields, fmt.Sprintf("type %q gets new fields or parameters", m.Type))
		case importing:
			// Re-sending the declared mapping is a no-op for the
			// fields and writes the marks into _meta.
		default:
			continue
		}
		d.Requests = append(d.Requests, t.putMapping(ix, m, major, lt.Meta, protect))
	}
	if undeclared := undeclaredTypes(ix, live); len(undeclared) > 0 {
		d.Notes = append(d.Notes, fmt.Sprintf("live mapping types that are not declared, left alone: %s", quoteAll(undeclared)))
	}
	return d
}

// view is a plan's Before or After of an index: its mappings, and its
// settings when declared.
func (t target) view(mappings map[string]any, settings map[string]string) map[string]any {
	v := map[string]any{"mappings": mappings}
	if len(settings) > 0 {
		v["settings"] = settings
	}
	return v
}

// liveSettings are the live values of the declared settings.
func liveSettings(ix *IndexDecl, live liveIndex) map[string]string {
	out := map[string]string{}
	for k := range ix.Settings {
		if v, ok := live.Settings[k]; ok {
			out[k] = fmt.Sprint(v)
		}
	}
	return out
}

// dynamicSettings are the index settings Elasticsearch 2.x to 7.x change
// on an open index (PUT /<index>/_settings); any other, such as
// number_of_shards or analysis, is fixed when the index is created
// ("Can't update non dynamic settings", [LIVE-2.4.1]).
var dynamicSettings = []string{
	"index.number_of_replicas", "index.auto_expand_replicas", "index.refresh_interval", "index.max_result_window",
	"index.blocks.", "index.translog.", "index.routing.", "index.priority", "index.max_inner_result_window",
}

// settingsDiff compares the declared settings with the live ones: the
// changed dynamic ones (the body of PUT /<index>/_settings) or the
// conflicts of static ones.
func settingsDiff(ix *IndexDecl, live liveIndex) (map[string]string, hcl.Diagnostics) {
	changed := map[string]string{}
	var conflicts hcl.Diagnostics
	for _, k := range slices.Sorted(maps.Keys(ix.Settings)) {
		want := ix.Settings[k]
		have, ok := live.Settings[k]
		if ok && fmt.Sprint(have) == want {
			continue
		}
		if slices.ContainsFunc(dynamicSettings, func(d string) bool { return k == d || strings.HasSuffix(d, ".") && strings.HasPrefix(k, d) }) {
			changed[k] = want
			continue
		}
		was := "not set"
		if ok {
			was = fmt.Sprintf("%q", fmt.Sprint(have))
		}
		conflicts = append(conflicts, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Static index setting cannot change",
			Detail: fmt.Sprintf("The index %q has %s = %s on the live cluster and %q declared. It is fixed when the index is created, so nothing will be written. "+
				"Declare the live value, or declare a new index with this setting and reindex the documents into it.", ix.Name, k, was, want),
			Subject: ix.SettingsRange.Ptr(),
			Context: ix.DeclRange.Ptr(),
		})
	}
	return changed, conflicts
}

// liveOf is the live index of that name and what the ownership decision
// needs to know of it.
func (t target) liveOf(f facts, name string) (liveIndex, adapter.LiveObject) {
	live, exists := f.Indices[name]
	return live, adapter.LiveObject{Exists: exists, Owner: indexOwner(live, t.project), Protected: indexProtected(live),
		What: fmt.Sprintf("%d mapping %s on cluster %s", len(live.Mappings), plans.Plural(len(live.Mappings), "type"), f.ClusterName)}
}

// undeclaredTypes lists the live types of an index that the index does not
// declare, in name order.
func undeclaredTypes(ix *IndexDecl, live liveIndex) []string {
	var out []string
	for _, t := range slices.Sorted(maps.Keys(live.Mappings)) {
		if !slices.ContainsFunc(ix.Mappings, func(m *Mapping) bool { return m.Type == t }) {
			out = append(out, t)
		}
	}
	return out
}

// checkCluster refuses a server provision does not support, a tribe node
// and a cluster of another name.
func (t target) checkCluster(f facts) hcl.Diagnostics {
	if why := unsupported(f); why != "" {
		return hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Unsupported search server",
			Detail: fmt.Sprintf("%s answers as %s. provision supports Elasticsearch 2.x, 5.x, 6.x and 7.x, whose typed mapping APIs (PUT /<index>/_mapping/<type>) the dashboard tool's four types need; "+
				"Elasticsearch 8.x and OpenSearch take typeless mappings only, so nothing will be written.", t.where, why),
			Subject: t.search.URLRange.Ptr(),
			Context: t.search.DeclRange.Ptr(),
		}}
	}
	if len(f.Tribe) > 0 {
		var members []string
		for name, cluster := range f.Tribe {
			members = append(members, fmt.Sprintf("%s (cluster.name %s)", name, cluster))
		}
		sort.Strings(members)
		return hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Search URL is a tribe node",
			Detail: fmt.Sprintf("%s is a tribe node joined to %s. A tribe node is read-only: index and mapping writes through it wait out the master timeout and fail with master_not_discovered_exception. "+
				"Point url at a node of the member cluster %q and, if you like, put the tribe node in tribe_url so that provision checks the result through it.", t.where, strings.Join(members, " and "), t.search.ClusterName),
			Subject: t.search.URLRange.Ptr(),
			Context: t.search.DeclRange.Ptr(),
		}}
	}
	var diags hcl.Diagnostics
	for _, n := range f.Nodes {
		switch {
		case n.Error != "":
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagWarning,
				Summary:  "A search node does not answer",
				Detail:   fmt.Sprintf("%s, one of the nodes of %s, does not answer (%s). provision reads and writes through the others.", n.URL, t.backend, n.Error),
				Subject:  t.search.URLRange.Ptr(),
			})
		case n.ClusterName != t.search.ClusterName:
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Wrong search cluster",
				Detail: fmt.Sprintf("%s belongs to the cluster %q, but the search block declares cluster_name %q for all its nodes. Nothing is written to a cluster other than the declared one: fix urls or cluster_name.",
					n.URL, n.ClusterName, t.search.ClusterName),
				Subject: t.search.URLRange.Ptr(),
				Context: t.search.DeclRange.Ptr(),
			})
		}
	}
	if diags.HasErrors() {
		return diags
	}
	if f.ClusterName != t.search.ClusterName {
		return hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Wrong search cluster",
			Detail: fmt.Sprintf("%s belongs to the cluster %q, but the search block declares cluster_name %q. Nothing is written to a cluster other than the declared one: fix url or cluster_name.",
				t.where, f.ClusterName, t.search.ClusterName),
			Subject: t.search.URLRange.Ptr(),
			Context: t.search.DeclRange.Ptr(),
		}}
	}
	return diags
}

// unsupported says what a server is when provision does not support it
// ("" when it does): GET / tells OpenSearch by version.distribution (or,
// in its compatibility mode, which reports 7.10.2, by its tagline), and
// the major version from version.number (es-api-facts §1).
func unsupported(f facts) string {
	switch {
	case f.Distribution == "opensearch" || strings.Contains(f.Tagline, "OpenSearch"):
		return "OpenSearch " + f.Version
	case f.major() >= 8:
		return "Elasticsearch " + f.Version
	case f.major() < 2:
		return fmt.Sprintf("version %q", f.Version)
	}
	return ""
}

// versionLimits reports what the server's generation cannot take: its
// types, its number of types per index, and on 2.x, whose rules are
// known whole, every field mapping it would refuse (mappingRules2).
func versionLimits(ix *IndexDecl, live liveIndex, major int) hcl.Diagnostics {
	var diags hcl.Diagnostics
	if major == 2 {
		diags = mappingRules2(ix, live)
	}
	if major < 5 {
		for _, m := range ix.Mappings {
			for _, f := range fieldsOf(m.Properties, "text", "keyword") {
				diags = append(diags, &hcl.Diagnostic{
					Severity: hcl.DiagError,
					Summary:  "Field type the server does not have",
					Detail: fmt.Sprintf("Elasticsearch %d.x has no %q type (5.x introduced text and keyword). Declare \"string\" (analyzed, for full text) or { type = \"string\", index = \"not_analyzed\" } (exact values).",
						major, f.Type()),
					Subject: f.Range.Ptr(),
				})
			}
		}
	}
	if major >= 6 && len(ix.Mappings) > 1 {
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "One mapping type per index",
			Detail: fmt.Sprintf("Elasticsearch %d.x allows one mapping type per index (indices created on 6.x and later refuse a second type with \"Rejecting mapping update ... more than 1 type\"), and index %q declares %d. "+
				"Declare one index per type, or merge the types into one with a field that says the kind.", major, ix.Name, len(ix.Mappings)),
			Subject: ix.Mappings[1].DeclRange.Ptr(),
			Context: ix.DeclRange.Ptr(),
		})
	}
	if major >= 6 {
		for _, m := range ix.Mappings {
			for _, f := range fieldsOf(m.Properties, "string") {
				diags = append(diags, &hcl.Diagnostic{
					Severity: hcl.DiagError,
					Summary:  "Field type string is gone",
					Detail:   fmt.Sprintf("Elasticsearch %d.x has no \"string\" type (5.x replaced it). Declare \"text\" for full-text search or \"keyword\" for exact values, sorting and aggregations.", major),
					Subject:  f.Range.Ptr(),
				})
			}
		}
	}
	return diags
}

var (
	acceptJSON = map[string]string{"Accept": "application/json"}
	jsonBody   = map[string]string{"Accept": "application/json", "Content-Type": "application/json"}
)

// deleteIndex is DELETE /<index>: sent once, never retried (a repeat
// after a lost answer would be a 404).
func deleteIndex(name string) plans.Request {
	return plans.Request{Method: "DELETE", Path: "/" + name, Header: acceptJSON}
}

// createIndex is PUT /<index>/ with the ownership marks in the first
// declared type's _meta, so that an index whose mappings were never put
// (an apply that stopped after this request) is still known as the
// project's. 7.x takes a typed body only with include_type_name.
func (t target) createIndex(ix *IndexDecl, major int, protect bool) plans.Request {
	path := "/" + ix.Name + "/"
	if major >= 7 {
		path += "?include_type_name=true"
	}
	body := map[string]any{"mappings": map[string]any{ix.Mappings[0].Type: map[string]any{"_meta": adapter.Marks(t.project, protect)}}}
	if len(ix.Settings) > 0 {
		body["settings"] = ix.Settings
	}
	return plans.Request{Method: "PUT", Path: path, Header: jsonBody, Body: adapter.RawJSON(body)}
}

// putMapping is PUT /<index>/_mapping/<type> with the owner's _meta; 7.x
// needs include_type_name to take a typed body.
// A mapping PUT replaces the type's _meta as a whole, so what other tools
// keep there (liveMeta) is sent again beside the marks.
func (t target) putMapping(ix *IndexDecl, m *Mapping, major int, liveMeta map[string]any, protect bool) plans.Request {
	meta := adapter.Unmarked(liveMeta)
	for k, v := range adapter.Marks(t.project, protect) {
		meta[k] = v
	}
	return mappingRequest(ix.Name, m.Type, major, map[string]any{"_meta": meta, "properties": properties(m.Properties)})
}

// mappingRequest is PUT /<index>/_mapping/<type> of body.
func mappingRequest(index, typ string, major int, body map[string]any) plans.Request {
	path := "/" + index + "/_mapping/" + typ
	if major >= 7 {
		path += "?include_type_name=true"
	}
	return plans.Request{Method: "PUT", Path: path, Header: jsonBody, Body: adapter.RawJSON(map[string]any{typ: body}), Idempotent: true}
}

// forgetIndex takes the marks out of the _meta of each type of the index
// that carries them (read with the undeclared indices): PUT of the type's
// _meta alone, which leaves its fields as they are.
func forgetIndex(name string, marks liveIndex, major int) []plans.Request {
	var out []plans.Request
	for _, typ := range slices.Sorted(maps.Keys(marks.Mappings)) {
		if meta := marks.Mappings[typ].Meta; adapter.OwnerOf(meta) != "" {
			out = append(out, mappingRequest(name, typ, major, map[string]any{"_meta": adapter.Unmarked(meta)}))
		}
	}
	return out
}

// declaredMappings is a plan's After: each declared type with its marks
// and properties.
func (t target) declaredMappings(ix *IndexDecl, protect bool) map[string]any {
	out := map[string]any{}
	for _, m := range ix.Mappings {
		out[m.Type] = map[string]any{"_meta": adapter.Marks(t.project, protect), "properties": properties(m.Properties)}
	}
	return out
}

// liveMappings is a plan's Before: the live declared types, with the marks
// of their _meta and the declared fields.
func liveMappings(ix *IndexDecl, live liveIndex) map[string]any {
	out := map[string]any{}
	for _, m := range ix.Mappings {
		if lt, ok := live.Mappings[m.Type]; ok {
			v := map[string]any{"properties": liveView(m.Properties, lt.Properties)}
			if marks := markView(lt.Meta); len(marks) > 0 {
				v["_meta"] = marks
			}
			out[m.Type] = v
		}
	}
	return out
}

// markView is the part of a live _meta that holds provision's marks.
func markView(meta map[string]any) map[string]any {
	out := map[string]any{}
	for _, k := range adapter.MarkKeys {
		if v, ok := meta[k]; ok {
			out[k] = v
		}
	}
	return out
}
