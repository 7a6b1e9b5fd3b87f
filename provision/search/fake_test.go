package search

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/provision-dev/provision/provision/plans"
)

// fakeES stands in for Elasticsearch 5.x, 6.x and 7.x, which cannot run
// here (no distribution of them is in the registries this machine
// reaches); ES 2.4.1 is tested for real. It
// copies only what a plan and an apply of typed mappings touch, each
// answer from Elasticsearch's reference of that version
// (www.elastic.co/guide/en/elasticsearch/reference/<version>/):
//
//   - GET /: version.number and cluster_name (§1).
//   - GET /_nodes/_local/settings?filter_path=nodes.*.settings.tribe: {} on
//     a normal node (§7, "Detection via REST").
//   - GET /<i>/_mapping?ignore_unavailable=true: {"<i>":{"mappings":{...}}}
//     (§5); on 7.x typed only with include_type_name=true (§5, 7.x).
//     GET /_mapping: the same for every index.
//   - PUT /<i>/_settings: {"acknowledged":true}, the flat settings stored.
//   - PUT /<i>/: {"acknowledged":true,...} (§2), the body's typed mappings
//     and settings stored; on 7.x a typed body without include_type_name → 400 "The
//     mapping definition cannot be nested under a type" (§4.3).
//   - PUT /<i>/_mapping/<type>: 7.x without include_type_name → 400
//     "Types cannot be provided in put mapping requests..." (§4.3); 6.x and
//     7.x refuse a second type → 400 "Rejecting mapping update ... more than
//     1 type" (§4.3, §10.3) and "string" → 400 mapper_parsing_exception
//     "No handler for type [string] declared on field [...]" (§6); 5.x
//     stores a declared "string" by the rule of its StringFieldMapper
//     auto-upgrade (5.x core/.../index/mapper/StringFieldMapper.java
//     TypeParser, read through the code index): index "not_analyzed" or
//     "no" → "keyword" ("no" as index: false), anything else → "text",
//     without a "keyword" sub-field (only dynamic mapping adds one).
//   - GET / of OpenSearch: version.distribution "opensearch" and its
//     tagline (es-api-facts §1).
type fakeES struct {
	version string
	// distribution is "" for Elasticsearch, "opensearch" for OpenSearch.
	distribution string
	mu           sync.Mutex
	indices      map[string]map[string]map[string]any // index → type → mapping
	settings     map[string]map[string]string         // index → flat settings
	writes       []string
}

func newFakeES(t *testing.T, version string) (*fakeES, string) {
	f := &fakeES{version: version, indices: map[string]map[string]map[string]any{}, settings: map[string]map[string]string{}}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv.URL
}

func (f *fakeES) major() int {
	var m int
	fmt.Sscanf(f.version, "%d", &m)
	return m
}

func (f *fakeES) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	typed := r.URL.Query().Get("include_type_name") == "true"
	switch {
	case r.Method == "GET" && r.URL.Path == "/" && f.distribution == "opensearch":
		fmt.Fprintf(w, `{"name":"fake","cluster_name":"t1","version":{"distribution":"opensearch","number":%q},"tagline":"The OpenSearch Project: https://opensearch.org/"}`, f.version)
	case r.Method == "GET" && r.URL.Path == "/":
		fmt.Fprintf(w, `{"name":"fake","cluster_name":"t1","version":{"number":%q},"tagline":"You Know, for Search"}`, f.version)
	case r.Method == "GET" && parts[0] == "_nodes":
		fmt.Fprint(w, `{}`)
	case r.Method == "GET" && r.URL.Path == "/_cluster/health":
		// Every index green: filter_path=indices.*.status keeps nothing.
		fmt.Fprint(w, `{}`)
	case r.Method == "GET" && len(parts) == 1 && parts[0] != "_mapping":
		// GET /<i,...>: mappings and (flat) settings of each (§5; the get
		// index API, whose typed form 7.x gives with include_type_name).
		out := map[string]any{}
		for _, name := range strings.Split(parts[0], ",") {
			if types, ok := f.indices[name]; ok {
				settings := map[string]any{"index.number_of_shards": "5", "index.number_of_replicas": "1"}
				for k, v := range f.settings[name] {
					settings[k] = v
				}
				out[name] = map[string]any{"mappings": types, "settings": settings}
			}
		}
		json.NewEncoder(w).Encode(out)
	case r.Method == "PUT" && len(parts) == 2 && parts[1] == "_settings":
		f.writes = append(f.writes, r.Method+" "+r.URL.RequestURI())
		var body map[string]string
		raw, _ := io.ReadAll(r.Body)
		json.Unmarshal(raw, &body)
		for k, v := range body {
			f.settings[parts[0]][k] = v
		}
		fmt.Fprint(w, `{"acknowledged":true}`)
	case r.Method == "GET" && len(parts) == 1 && parts[0] == "_mapping":
		// Every index's mappings; filter_path (the marks only) is not
		// applied: the whole answer holds the same marks (§5).
		out := map[string]any{}
		for name, types := range f.indices {
			out[name] = map[string]any{"mappings": types}
		}
		json.NewEncoder(w).Encode(out)
	case r.Method == "GET" && len(parts) == 2 && parts[1] == "_mapping":
		out := map[string]any{}
		for _, name := range strings.Split(parts[0], ",") {
			if types, ok := f.indices[name]; ok {
				if f.major() >= 7 && !typed && len(types) == 1 {
					for _, m := range types {
						out[name] = map[string]any{"mappings": m}
					}
					continue
				}
				out[name] = map[string]any{"mappings": types}
			}
		}
		json.NewEncoder(w).Encode(out)
	case r.Method == "PUT" && len(parts) == 1:
		f.writes = append(f.writes, r.Method+" "+r.URL.RequestURI())
		var body struct {
			Mappings map[string]map[string]any `json:"mappings"`
			Settings map[string]string         `json:"settings"`
		}
		raw, _ := io.ReadAll(r.Body)
		json.Unmarshal(raw, &body)
		if f.major() >= 7 && !typed && len(body.Mappings) > 0 {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"error":{"type":"illegal_argument_exception","reason":"The mapping definition cannot be nested under a type [search] unless include_type_name is set to true."},"status":400}`)
			return
		}
		f.indices[parts[0]] = map[string]map[string]any{}
		f.settings[parts[0]] = map[string]string{}
		for k, v := range body.Settings {
			f.settings[parts[0]][k] = v
		}
		for typ, m := range body.Mappings {
			f.indices[parts[0]][typ] = m
		}
		fmt.Fprintf(w, `{"acknowledged":true,"shards_acknowledged":true,"index":%q}`, parts[0])
	case r.Method == "PUT" && len(parts) == 3 && parts[1] == "_mapping":
		f.writes = append(f.writes, r.Method+" "+r.URL.RequestURI())
		f.putMapping(w, r, parts[0], parts[2], typed)
	default:
		http.Error(w, `{"error":"not faked"}`, http.StatusNotImplemented)
	}
}

func (f *fakeES) putMapping(w http.ResponseWriter, r *http.Request, index, typ string, typed bool) {
	fail := func(kind, reason string) {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"error":{"root_cause":[{"type":%q,"reason":%q}],"type":%q,"reason":%q},"status":400}`, kind, reason, kind, reason)
	}
	if f.major() >= 7 && !typed {
		fail("illegal_argument_exception", "Types cannot be provided in put mapping requests, unless the include_type_name parameter is set to true.")
		return
	}
	types := f.indices[index]
	if _, exists := types[typ]; f.major() >= 6 && len(types) > 0 && !exists {
		fail("illegal_argument_exception", fmt.Sprintf("Rejecting mapping update to [%s] as the final mapping would have more than 1 type: [%s, %s]", index, firstKey(types), typ))
		return
	}
	body, _ := io.ReadAll(r.Body)
	var m map[string]map[string]any
	json.Unmarshal(body, &m)
	mapping := m[typ]
	props, _ := mapping["properties"].(map[string]any)
	if bad := f.upgrade(props); bad != "" {
		fail("mapper_parsing_exception", "No handler for type [string] declared on field ["+bad+"]")
		return
	}
	if old, ok := types[typ]; ok {
		oldProps, _ := old["properties"].(map[string]any)
		if oldProps == nil {
			oldProps = map[string]any{}
		}
		for k, v := range props {
			oldProps[k] = v
		}
		mapping["properties"] = oldProps
	}
	types[typ] = mapping
	fmt.Fprint(w, `{"acknowledged":true}`)
}

// upgrade applies 5.x's string rewrite, or names the string field that
// 6.x and later refuse.
func (f *fakeES) upgrade(props map[string]any) string {
	for name, v := range props {
		field, _ := v.(map[string]any)
		if field["type"] == "string" {
			if f.major() >= 6 {
				return name
			}
			switch field["index"] {
			case "not_analyzed":
				field["type"] = "keyword"
				delete(field, "index")
			case "no":
				field["type"], field["index"] = "keyword", false
			default:
				field["type"] = "text"
				delete(field, "index")
			}
		}
		if sub, ok := field["properties"].(map[string]any); ok {
			if bad := f.upgrade(sub); bad != "" {
				return bad
			}
		}
	}
	return ""
}

func firstKey(m map[string]map[string]any) string {
	for k := range m {
		return k
	}
	return ""
}

// TestVersions plans and applies against each faked generation.
func TestVersions(t *testing.T) {
	t.Run("5.x converges although string comes back as text", func(t *testing.T) {
		fake, url := newFakeES(t, "5.6.16")
		cfg := seed(t, "search_url="+url)
		b, changes, diags := plan(t, cfg, plans.Converge)
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		send(t, b, changes)
		if got := fake.indices[".dashboard"]["search"]["properties"].(map[string]any)["title"].(map[string]any)["type"]; got != "text" {
			t.Fatalf("the fake did not upgrade string: %v", got)
		}
		_, changes, diags = plan(t, cfg, plans.Converge)
		if diags.HasErrors() || len(changes) != 1 || changes[0].Action != plans.NoOp {
			t.Fatalf("a converged 5.x cluster plans %v %v", requestLines(changes), diags)
		}
	})
	t.Run("5.x: a not_analyzed string is keyword, an analyzed one text", func(t *testing.T) {
		fake, url := newFakeES(t, "5.6.16")
		exact := fields(t, url, "t1", "five", "string", "\n      code  = { type = \"string\", index = \"not_analyzed\" }")
		b, changes, diags := plan(t, exact, plans.Converge)
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		send(t, b, changes)
		props := fake.indices["five"]["search"]["properties"].(map[string]any)
		if props["code"].(map[string]any)["type"] != "keyword" || props["title"].(map[string]any)["type"] != "text" {
			t.Fatalf("the fake stored %v", props)
		}
		if _, changes, diags = plan(t, exact, plans.Converge); diags.HasErrors() || changes[0].Action != plans.NoOp {
			t.Fatalf("not converged: %v %v", requestLines(changes), diags)
		}
		// code declared analyzed now: text, where the live field is keyword.
		_, _, diags = plan(t, fields(t, url, "t1", "five", "string", "\n      code  = \"string\""), plans.Converge)
		if diff := cmp.Diff([]string{"main.hcl:14: Field type cannot change"}, diagLines(diags)); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	t.Run("OpenSearch and Elasticsearch 8 are refused at plan time", func(t *testing.T) {
		for _, srv := range []struct{ version, distribution, says string }{
			{"2.11.0", "opensearch", "OpenSearch 2.11.0"},
			{"8.11.1", "", "Elasticsearch 8.11.1"},
		} {
			fake, url := newFakeES(t, srv.version)
			fake.distribution = srv.distribution
			_, changes, diags := plan(t, fields(t, url, "t1", "new", "text", ""), plans.Converge)
			if diff := cmp.Diff([]string{"main.hcl:4: Unsupported search server"}, diagLines(diags)); diff != "" || len(changes) != 0 || len(fake.writes) != 0 {
				t.Fatalf("%s (-want +got):\n%s", srv.says, diff)
			}
			if !strings.Contains(diags[0].Detail, "answers as "+srv.says) {
				t.Errorf("detail: %s", diags[0].Detail)
			}
		}
	})
	t.Run("6.x refuses four types and string at plan time", func(t *testing.T) {
		fake, url := newFakeES(t, "6.8.23")
		_, changes, diags := plan(t, seed(t, "search_url="+url), plans.Converge)
		got := diagLines(diags)
		if len(got) == 0 || got[0] != "dashboard.hcl:36: One mapping type per index" {
			t.Fatalf("diagnostics: %v", got)
		}
		if len(changes) != 0 || len(fake.writes) != 0 {
			t.Errorf("a refused plan has changes %v or wrote %v", requestLines(changes), fake.writes)
		}
		_, _, diags = plan(t, fields(t, url, "t1", "one", "string", ""), plans.Converge)
		if diff := cmp.Diff([]string{"main.hcl:12: Field type string is gone"}, diagLines(diags)); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	t.Run("7.x plans typed requests with include_type_name", func(t *testing.T) {
		fake, url := newFakeES(t, "7.17.10")
		cfg := fields(t, url, "t1", "seven", "text", "")
		b, changes, diags := plan(t, cfg, plans.Converge)
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		want := []string{"index.seven create: PUT /seven/?include_type_name=true", "index.seven create: PUT /seven/_mapping/search?include_type_name=true"}
		if diff := cmp.Diff(want, requestLines(changes)); diff != "" {
			t.Fatalf("(-want +got):\n%s", diff)
		}
		send(t, b, changes)
		if _, changes, _ = plan(t, cfg, plans.Converge); changes[0].Action != plans.NoOp {
			t.Errorf("a converged 7.x cluster plans %v (writes %v)", requestLines(changes), fake.writes)
		}
	})
}
