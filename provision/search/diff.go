package search

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision"
	"github.com/provision-dev/provision/schema"
)

// facts are what a plan reads from a cluster.
type facts struct {
	Version     string `json:"version"`
	ClusterName string `json:"cluster_name"`
	// Tribe maps a tribe node's member names to their cluster names; it is
	// empty for a node of a normal cluster.
	Tribe map[string]string `json:"tribe,omitempty"`
	// Indices holds the declared indices that exist, with their mappings.
	Indices map[string]liveIndex `json:"indices"`
}

type liveIndex struct {
	Mappings map[string]liveType `json:"mappings"`
}

type liveType struct {
	Meta       map[string]string    `json:"_meta,omitempty"`
	Properties map[string]liveField `json:"properties,omitempty"`
}

// major is the server's major version, 0 when unknown.
func (f facts) major() int {
	n, _ := strconv.Atoi(strings.SplitN(f.Version, ".", 2)[0])
	return n
}

// owner is the ownership mark written in every mapping type's _meta.
func owner(project string) map[string]string {
	return map[string]string{schema.ManagedByKey: "provision", schema.MetaPrefix + "project": project}
}

// ownership reads the marks on the live types that the index declares.
// An index is the project's when every one of them carries its mark, or
// when it has no types at all (an apply that stopped after creating it).
// Types the index does not declare, such as those the dashboard tool adds,
// do not count. other names another project whose mark is there.
func ownership(ix *schema.Index, live liveIndex, project string) (owned bool, other string) {
	marks := map[string]bool{}
	for _, m := range ix.Mappings {
		if lt, ok := live.Mappings[m.Type]; ok {
			mark := ""
			if lt.Meta[schema.ManagedByKey] == "provision" {
				mark = lt.Meta[schema.MetaPrefix+"project"]
			}
			marks[mark] = true
			if mark != project && mark != "" {
				other = mark
			}
		}
	}
	if len(marks) == 0 {
		return len(live.Mappings) == 0, ""
	}
	return len(marks) == 1 && marks[project], other
}

// target is what a plan works on: one search block and its indices.
type target struct {
	project string
	search  *schema.Search
	indices []*schema.Index
	backend string
}

// diff compares the declared indices with what the cluster holds.
func (t target) diff(f facts, mode provision.Mode) ([]*provision.Change, hcl.Diagnostics) {
	if diags := t.checkCluster(f); diags.HasErrors() {
		return nil, diags
	}
	var changes []*provision.Change
	var diags hcl.Diagnostics
	for _, ix := range t.indices {
		live, exists := f.Indices[ix.Name]
		if owned, other := ownership(ix, live, t.project); exists && !owned {
			diags = append(diags, notOwned(ix, other, t.project))
			continue
		}
		c := &provision.Change{
			Addr:       provision.Addr{Kind: "index", Name: ix.Name},
			Backend:    t.backend,
			After:      provision.RawJSON(map[string]any{"mappings": declaredMappings(ix)}),
			DeclaredAt: ix.DeclRange.String(),
			Requests:   []provision.Request{},
		}
		if mode == provision.Destroy {
			if exists && len(live.Mappings) > 0 {
				c.Action, c.After, c.Reason = provision.Delete, nil, "owned by project "+t.project
				c.Before = provision.RawJSON(map[string]any{"mappings": liveMappings(ix, live)})
				c.Requests = []provision.Request{{Method: "DELETE", Path: "/" + ix.Name, Header: acceptJSON}}
				changes = append(changes, c)
			}
			continue
		}
		if vdiags := versionLimits(ix, f.major()); vdiags.HasErrors() {
			diags = append(diags, vdiags...)
			continue
		}
		if !exists {
			c.Action = provision.Create
			c.Requests = append(c.Requests, provision.Request{Method: "PUT", Path: "/" + ix.Name + "/", Header: acceptJSON})
			for _, m := range ix.Mappings {
				c.Requests = append(c.Requests, t.putMapping(ix, m, f.major()))
			}
			changes = append(changes, c)
			continue
		}
		c.Before = provision.RawJSON(map[string]any{"mappings": liveMappings(ix, live)})
		var reasons []string
		for _, m := range ix.Mappings {
			lt, ok := live.Mappings[m.Type]
			if !ok {
				reasons = append(reasons, fmt.Sprintf("type %q is new", m.Type))
				c.Requests = append(c.Requests, t.putMapping(ix, m, f.major()))
				continue
			}
			missing, conflicts, extra := fieldDiff("", m.Properties, lt.Properties, f.major())
			diags = append(diags, conflicts...)
			if len(extra) > 0 {
				c.Notes = append(c.Notes, fmt.Sprintf("type %q has live fields that are not declared, left alone: %s", m.Type, strings.Join(extra, ", ")))
			}
			if missing {
				reasons = append(reasons, fmt.Sprintf("type %q gets new fields", m.Type))
				c.Requests = append(c.Requests, t.putMapping(ix, m, f.major()))
			}
		}
		c.Action = provision.NoOp
		if len(c.Requests) > 0 {
			c.Action, c.Reason = provision.Update, strings.Join(reasons, "; ")
		}
		changes = append(changes, c)
	}
	return changes, diags
}

// checkCluster refuses a tribe node and a cluster of another name.
func (t target) checkCluster(f facts) hcl.Diagnostics {
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
				"Point url at a node of the member cluster %q and, if you like, put the tribe node in tribe_url so that provision checks the result through it.", t.search.URL, strings.Join(members, " and "), t.search.ClusterName),
			Subject: t.search.URLRange.Ptr(),
			Context: t.search.DeclRange.Ptr(),
		}}
	}
	if f.ClusterName != t.search.ClusterName {
		return hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Wrong search cluster",
			Detail: fmt.Sprintf("%s belongs to the cluster %q, but the search block declares cluster_name %q. Nothing is written to a cluster other than the declared one: fix url or cluster_name.",
				t.search.URL, f.ClusterName, t.search.ClusterName),
			Subject: t.search.URLRange.Ptr(),
			Context: t.search.DeclRange.Ptr(),
		}}
	}
	return nil
}

// versionLimits reports what the server's generation cannot take.
func versionLimits(ix *schema.Index, major int) hcl.Diagnostics {
	var diags hcl.Diagnostics
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
			for _, f := range stringFields(m.Properties) {
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

func notOwned(ix *schema.Index, project, want string) *hcl.Diagnostic {
	who := "was not created by provision"
	if project != "" {
		who = fmt.Sprintf("belongs to the provision project %q, not %q", project, want)
	}
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  "Index provision does not own",
		Detail: fmt.Sprintf("The index %q already exists and %s (its mapping types' _meta say so). provision never changes what it does not own. Declare another index name, or add the mark by hand if this index is really meant to be managed here.",
			ix.Name, who),
		Subject: ix.NameRange.Ptr(),
		Context: ix.DeclRange.Ptr(),
	}
}

var (
	acceptJSON = map[string]string{"Accept": "application/json"}
	jsonBody   = map[string]string{"Accept": "application/json", "Content-Type": "application/json"}
)

// putMapping is PUT /<index>/_mapping/<type> with the owner's _meta; 7.x
// needs include_type_name to take a typed body.
func (t target) putMapping(ix *schema.Index, m *schema.Mapping, major int) provision.Request {
	path := "/" + ix.Name + "/_mapping/" + m.Type
	if major >= 7 {
		path += "?include_type_name=true"
	}
	body := map[string]any{m.Type: map[string]any{"_meta": owner(t.project), "properties": properties(m.Properties)}}
	return provision.Request{Method: "PUT", Path: path, Header: jsonBody, Body: provision.RawJSON(body)}
}

func declaredMappings(ix *schema.Index) map[string]any {
	out := map[string]any{}
	for _, m := range ix.Mappings {
		out[m.Type] = map[string]any{"properties": properties(m.Properties)}
	}
	return out
}

func liveMappings(ix *schema.Index, live liveIndex) map[string]any {
	out := map[string]any{}
	for _, m := range ix.Mappings {
		if lt, ok := live.Mappings[m.Type]; ok {
			out[m.Type] = map[string]any{"properties": liveView(m.Properties, lt.Properties)}
		}
	}
	return out
}
