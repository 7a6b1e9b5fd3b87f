package search

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"sort"
	"strings"

	"github.com/elastic/go-elasticsearch/v7"
	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision/plans"
)

// A tribe node merges its member clusters' indices by name and serves one
// copy of a name that several members hold: tribe.on_conflict decides
// which (ES 2.4 TribeService: "any", the default, keeps the first copy it
// saw; "drop" serves neither; "prefer_<member>" that member's). It records
// the member of each index it serves in the index setting tribe.name.
//
// A tribe node is made read-only by two blocks, and production turns on
// both: tribe.blocks.write refuses document writes, tribe.blocks.metadata
// refuses every read of indices' metadata (GET /<index>/_mapping,
// /_settings, /_stats, /_cat/indices and HEAD /<index> answer 400
// cluster_block_exception). Measured on ES 2.4.1 with both blocks on, the
// tribe still answers document reads and searches, and its cluster state
// (GET /_cluster/state/metadata/<index>), which Elasticsearch never blocks
// so that a blocked cluster can be diagnosed: it holds each index's
// mappings and settings, tribe.name included. So provision reads a tribe
// node only through its cluster state, its nodes' info and a search, the
// same with both blocks, one or none.

// stateIndex is what a tribe's cluster state holds of one index.
type stateIndex struct {
	Settings map[string]any             `json:"settings"` // flat
	Mappings map[string]json.RawMessage `json:"mappings"`
}

// tribeState reads the indices of names (those the tribe serves; the
// others are left out) from the tribe's cluster state.
func (b *Backend) tribeState(ctx context.Context, names []string) (map[string]stateIndex, error) {
	var state struct {
		Metadata struct {
			Indices map[string]stateIndex `json:"indices"`
		} `json:"metadata"`
	}
	path := "/_cluster/state/metadata/" + strings.Join(names, ",") + "?flat_settings=true&ignore_unavailable=true&allow_no_indices=true"
	if err := b.get(ctx, b.tribe, path, &state); err != nil {
		return nil, err
	}
	return state.Metadata.Indices, nil
}

// tribeBlocks reads which of the tribe node's read-only blocks are on,
// from its cluster state's global blocks (ids 10 and 11 of ES's
// TribeService).
func (b *Backend) tribeBlocks(ctx context.Context) (write, metadata bool, err error) {
	var state struct {
		Blocks struct {
			Global map[string]struct {
				Description string `json:"description"`
			} `json:"global"`
		} `json:"blocks"`
	}
	if err := b.get(ctx, b.tribe, "/_cluster/state/blocks", &state); err != nil {
		return false, false, err
	}
	for _, bl := range state.Blocks.Global {
		write = write || strings.Contains(bl.Description, "tribe node, write not allowed")
		metadata = metadata || strings.Contains(bl.Description, "tribe node, metadata not allowed")
	}
	return write, metadata, nil
}

// blockedWords name the blocks that are on.
func blockedWords(write, metadata bool) string {
	switch {
	case write && metadata:
		return "the tribe node blocks writes and metadata"
	case metadata:
		return "the tribe node blocks metadata"
	}
	return "the tribe node blocks writes"
}

// blocksNote says what a blocked tribe node's readers get, and that
// provision's checks do not depend on it; "" for a tribe without blocks.
func blocksNote(url string, write, metadata bool) string {
	switch {
	case metadata:
		what := "metadata"
		if write {
			what = "writes and metadata (tribe.blocks.write, tribe.blocks.metadata)"
		}
		return fmt.Sprintf("the tribe node %s blocks %s: its readers get documents and searches, not mappings or settings (GET /<index>/_mapping answers 400 there). "+
			"provision checks each index through the tribe's cluster state and a search, which the blocks leave open, so no check is left out.", url, what)
	case write:
		return fmt.Sprintf("the tribe node %s blocks writes (tribe.blocks.write): its readers cannot save anything through it; every check reads as without the block.", url)
	}
	return ""
}

// tribeSettings reads GET /_nodes/_local/settings of a node: the tribe
// members it joins (member name → cluster.name; none for a normal node)
// and its tribe.on_conflict ("" when it is not set: "any").
func (b *Backend) tribeSettings(ctx context.Context, c *elasticsearch.Client) (map[string]string, string, error) {
	var nodes struct {
		Nodes map[string]struct {
			Settings struct {
				Tribe map[string]json.RawMessage `json:"tribe"`
			} `json:"settings"`
		} `json:"nodes"`
	}
	if err := b.get(ctx, c, "/_nodes/_local/settings?filter_path=nodes.*.settings.tribe", &nodes); err != nil {
		return nil, "", err
	}
	members, onConflict := map[string]string{}, ""
	for _, n := range nodes.Nodes {
		for name, raw := range n.Settings.Tribe {
			var member struct {
				Cluster struct {
					Name string `json:"name"`
				} `json:"cluster"`
			}
			if name == "on_conflict" {
				_ = json.Unmarshal(raw, &onConflict)
			} else if json.Unmarshal(raw, &member) == nil && member.Cluster.Name != "" {
				members[name] = member.Cluster.Name
			}
		}
	}
	return members, onConflict, nil
}

// tribeView is what the tribe node shows of the declared indices.
type tribeView struct {
	Members    map[string]string `json:"members"` // member name → cluster.name
	OnConflict string            `json:"on_conflict,omitempty"`
	Ours       string            `json:"ours,omitempty"`   // the member that is the declared cluster
	Served     map[string]string `json:"served,omitempty"` // index → member whose copy is served
	// Copies holds, for each index, the other members that hold a copy of
	// it and its number of documents.
	Copies map[string]map[string]int `json:"copies,omitempty"`
}

// tribeRead is what a plan reads of the tribe node: its view of the
// declared indices and its blocks, or why they could not be read.
type tribeRead struct {
	View  tribeView `json:"view"`
	Error string    `json:"error,omitempty"`
	// Blocks are the read-only blocks that are on; nil when they could
	// not be read.
	Blocks *tribeBlocks `json:"blocks,omitempty"`
}

type tribeBlocks struct {
	Write    bool `json:"write,omitempty"`
	Metadata bool `json:"metadata,omitempty"`
}

// readTribeNode reads what a plan needs of the tribe node; a failure is
// recorded, for the plan's warning.
func (b *Backend) readTribeNode(ctx context.Context) *tribeRead {
	r := &tribeRead{}
	v, err := b.readTribe(ctx, b.scope.Indices)
	if err != nil {
		r.Error = err.Error()
	} else {
		r.View = v
	}
	if write, metadata, err := b.tribeBlocks(ctx); err == nil {
		r.Blocks = &tribeBlocks{write, metadata}
	}
	return r
}

// readTribe reads the tribe node in four requests, whatever the number of
// indices (its settings, the cluster state of the indices it serves, its nodes'
// members and HTTP addresses), and each other member once (the document
// counts of its copies).
func (b *Backend) readTribe(ctx context.Context, names []string) (tribeView, error) {
	v := tribeView{Served: map[string]string{}, Copies: map[string]map[string]int{}}
	var err error
	if v.Members, v.OnConflict, err = b.tribeSettings(ctx, b.tribe); err != nil {
		return v, err
	}
	for name, cluster := range v.Members {
		if cluster == b.search.ClusterName {
			v.Ours = name
		}
	}
	if v.Ours == "" {
		return v, nil
	}
	list := strings.Join(names, ",")
	indices, err := b.tribeState(ctx, names)
	if err != nil {
		return v, err
	}
	for ix, s := range indices {
		if m, ok := s.Settings["tribe.name"].(string); ok {
			v.Served[ix] = m
		}
	}
	// The tribe's cluster state names each node's member (the node
	// attribute tribe.name); the nodes info API, its HTTP address.
	var state struct {
		Nodes map[string]struct {
			Attributes map[string]string `json:"attributes"`
		} `json:"nodes"`
	}
	if err := b.get(ctx, b.tribe, "/_cluster/state/nodes?filter_path=nodes.*.attributes", &state); err != nil {
		return v, err
	}
	var nodes struct {
		Nodes map[string]struct {
			HTTP struct {
				PublishAddress string `json:"publish_address"`
			} `json:"http"`
		} `json:"nodes"`
	}
	if err := b.get(ctx, b.tribe, "/_nodes/http?filter_path=nodes.*.http.publish_address", &nodes); err != nil {
		return v, err
	}
	addrs := map[string][]string{}
	for id, n := range state.Nodes {
		if m, addr := n.Attributes["tribe.name"], nodes.Nodes[id].HTTP.PublishAddress; m != "" && m != v.Ours && addr != "" {
			addrs[m] = append(addrs[m], addr)
		}
	}
	scheme := "http"
	if u, err := url.Parse(b.urls[0]); err == nil && u.Scheme != "" {
		scheme = u.Scheme
	}
	for _, m := range slices.Sorted(maps.Keys(addrs)) {
		sort.Strings(addrs[m])
		c, err := b.client(scheme + "://" + addrs[m][0])
		if err != nil {
			return v, err
		}
		var stats struct {
			Indices map[string]struct {
				Primaries struct {
					Docs struct {
						Count int `json:"count"`
					} `json:"docs"`
				} `json:"primaries"`
			} `json:"indices"`
		}
		if err := b.get(ctx, c, "/"+list+"/_stats/docs?ignore_unavailable=true", &stats); err != nil {
			return v, fmt.Errorf("member %s (%s): %w", m, addrs[m][0], err)
		}
		for ix, st := range stats.Indices {
			if v.Copies[ix] == nil {
				v.Copies[ix] = map[string]int{}
			}
			v.Copies[ix][m] = st.Primaries.Docs.Count
		}
	}
	return v, nil
}

// conflictMeaning says what the tribe node's on_conflict does with an
// index several members hold.
func conflictMeaning(onConflict string) string {
	switch {
	case onConflict == "drop":
		return `tribe.on_conflict is "drop": the tribe node serves neither copy, so the index is invisible through it (ES 2.4 keeps it dropped until the tribe node restarts)`
	case strings.HasPrefix(onConflict, "prefer_"):
		return fmt.Sprintf("tribe.on_conflict is %q: the tribe node always serves %s's copy", onConflict, strings.TrimPrefix(onConflict, "prefer_"))
	}
	return `tribe.on_conflict is "any" (the default when the tribe node's settings do not show it): the tribe node keeps serving the first copy it saw, which depends on timing, not on the configuration`
}

// tribeDiagnostics are the plan's findings about the tribe's view: an
// error when the tribe node does not join the declared cluster, and a
// warning at each declared index that another member also holds or whose
// served copy is another member's.
func (b *Backend) tribeDiagnostics(r *tribeRead) hcl.Diagnostics {
	v := r.View
	if r.Error != "" {
		return hcl.Diagnostics{{
			Severity: hcl.DiagWarning,
			Summary:  "Cannot read the tribe node",
			Detail:   fmt.Sprintf("Reading the tribe node %s failed: %s. The plan goes on; the result cannot be checked through it.", b.scope.TribeURL, r.Error),
			Subject:  b.search.DeclRange.Ptr(),
		}}
	}
	if v.Ours == "" {
		return hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "The tribe node does not join this cluster",
			Detail: fmt.Sprintf("The tribe node %s joins %s, but not the cluster %q that the search block writes to, so the dashboard tool, which reads through the tribe node, would never see what is written. "+
				"Fix tribe_url or cluster_name, or add the cluster to the tribe node's settings (tribe.<name>.cluster.name).", b.scope.TribeURL, memberList(v.Members), b.search.ClusterName),
			Subject: b.search.DeclRange.Ptr(),
		}}
	}
	var diags hcl.Diagnostics
	for _, ix := range b.indices {
		others := v.Copies[ix.Name]
		served := v.Served[ix.Name]
		if len(others) == 0 && (served == "" || served == v.Ours) {
			continue
		}
		var held []string
		for _, m := range slices.Sorted(maps.Keys(others)) {
			held = append(held, fmt.Sprintf("%s (cluster %s) holds another copy with %d %s", m, v.Members[m], others[m], plans.Plural(others[m], "document")))
		}
		now := "serves no copy of it now"
		if served != "" {
			now = fmt.Sprintf("serves %s's copy now", served)
		}
		what := "is also held by another member"
		if served != "" && served != v.Ours {
			what = fmt.Sprintf("is served from %s, not from %s", served, v.Ours)
		}
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagWarning,
			Summary:  "Index " + what + " through the tribe node",
			Detail: fmt.Sprintf("%s. The tribe node %s %s; %s. The dashboard tool reads through the tribe node, so it sees only that copy. "+
				"Ways out: delete or rename the other copy on its own cluster, or set tribe.on_conflict: prefer_%s on the tribe node.",
				strings.Join(append([]string{fmt.Sprintf("%q is declared on %s", ix.Name, v.Ours)}, held...), "; "), b.scope.TribeURL, now, conflictMeaning(v.OnConflict), v.Ours),
			Subject: ix.NameRange.Ptr(),
			Context: ix.DeclRange.Ptr(),
		})
	}
	return diags
}

func memberList(members map[string]string) string {
	var out []string
	for _, m := range slices.Sorted(maps.Keys(members)) {
		out = append(out, fmt.Sprintf("%s (cluster %s)", m, members[m]))
	}
	if len(out) == 0 {
		return "no member"
	}
	return strings.Join(out, " and ")
}

// servedCheck says which copy the tribe node serves of each written index,
// and fails when one is another member's.
func (b *Backend) servedCheck(ctx context.Context, names []string) (string, error) {
	v, err := b.readTribe(ctx, names)
	if err != nil {
		return "", err
	}
	var wrong []string
	for _, n := range names {
		if s := v.Served[n]; s != v.Ours {
			wrong = append(wrong, fmt.Sprintf("%q is served from %s", n, s))
		}
	}
	if len(wrong) > 0 {
		return "", fmt.Errorf("the tribe node serves another member's copy, not the one written on %s: %s (%s)", v.Ours, strings.Join(wrong, "; "), conflictMeaning(v.OnConflict))
	}
	return v.Ours, nil
}
