package cli

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/provision/servers"
)

// ownershipSpec is the specs of TestOwnershipSurvivesPeople: a service, a
// key, an index and a document, each protected (prevent_destroy) and with
// the fields another hand owns ignored; blocks drops the blocks named
// (service, key, document, index), and tail is added at the end.
func ownershipSpec(title string, port int, tail string, drop ...string) string {
	blocks := map[string]string{
		"service": fmt.Sprintf(`service "own-api" {
  port = %d
  meta = { team = "edge" }
  lifecycle {
    prevent_destroy = true
    ignore_changes  = [meta["owner"]]
  }
}
`, port),
		"key": `key "apps/own/limits" {
  value = { rate = 100 }
  lifecycle {
    prevent_destroy = true
  }
}
`,
		"index": `index "own-dashboards" {
  search = "t1"
  mapping "dashboard" {
    properties = { title = "string", panelsJSON = "string" }
  }
  lifecycle {
    prevent_destroy = true
  }
}
`,
		"document": fmt.Sprintf(`document "dashboard" "edge" {
  source = {
    title      = %q
    panelsJSON = []
  }
  lifecycle {
    prevent_destroy = true
    ignore_changes  = [source.panelsJSON]
  }
}
`, title),
	}
	var b strings.Builder
	b.WriteString("project = \"own\"\n\nvariable \"search_url\" {\n  type = string\n}\n\nsearch \"t1\" {\n  url          = var.search_url\n  cluster_name = \"own\"\n}\n\n")
	// A key and an index the specs keep, so that the folder of the
	// protected key and the cluster's indices are read when their blocks
	// are gone.
	b.WriteString("key \"apps/own/other\" {\n  value = \"kept\"\n}\n\n")
	b.WriteString("index \"own-other\" {\n  search = \"t1\"\n  mapping \"doc\" {\n    properties = { title = \"string\" }\n  }\n}\n\n")
	for _, kind := range []string{"service", "key", "index", "document"} {
		if !strings.Contains(strings.Join(drop, ","), kind) {
			b.WriteString(blocks[kind] + "\n")
		}
	}
	return b.String() + tail
}

// TestOwnershipSurvivesPeople: on a real Consul agent and a real
// Elasticsearch 2.4.1, objects whose blocks say prevent_destroy carry the
// protection on the live object, so that the plan, the apply and destroy
// refuse to delete them once their blocks are gone, live and from a
// snapshot; removed blocks with destroy = false let go of them, which
// are then left as they are; and fields under ignore_changes, edited by
// hand, are no drift and are carried over by an update.
func TestOwnershipSurvivesPeople(t *testing.T) {
	agent := servers.NewConsul(t)
	es := servers.NewCluster(t, "own")
	sd := newSpecsDir(t, map[string]string{"CONSUL_HTTP_ADDR": agent.Addr, "NO_COLOR": "1"}, "-var", "search_url="+es.URL)
	write, run := sd.write, sd.run
	var last plans.Plan
	planned := func(args ...string) []string {
		t.Helper()
		last = sd.plan(args...)
		return changed(last, actionAddr)
	}
	get := func(url string) map[string]any {
		t.Helper()
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var v map[string]any
		if resp.StatusCode == http.StatusOK {
			if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
				t.Fatal(err)
			}
		}
		return v
	}
	service := func() map[string]any { return get("http://" + agent.Addr + "/v1/agent/service/own-api") }
	doc := func() map[string]any { return get(es.URL + "/own-dashboards/dashboard/edge") }
	key := func() (string, uint64, bool) {
		var pairs []struct {
			Value []byte
			Flags uint64
		}
		if json.Unmarshal([]byte(consulDo(t, agent.Addr, "GET", "/v1/kv/apps/own/limits", "")), &pairs) != nil || len(pairs) == 0 {
			return "", 0, false
		}
		return string(pairs[0].Value), pairs[0].Flags, true
	}
	record := func() string {
		return consulDo(t, agent.Addr, "GET", "/v1/kv/provision/keys/own/apps/own/limits?raw", "")
	}

	// 1. Applied: the protection is written on each live object.
	write(ownershipSpec("Edge", 18600, ""))
	run(exitOK, "apply", "-auto-approve")
	if m, _ := service()["Meta"].(map[string]any); m["provision-protected"] != "true" {
		t.Fatalf("the service's meta lacks the protection: %v", m)
	}
	if r := record(); r != `{"protected":true}` {
		t.Fatalf("the key's record is %q, want the protection", r)
	}
	if src, _ := doc()["_source"].(map[string]any); fmt.Sprint(src["provision"]) != "map[managed-by:provision provision-project:own provision-protected:true]" {
		t.Fatalf("the document's marks: %v", src["provision"])
	}
	if meta := get(es.URL + "/own-dashboards/_mapping"); !strings.Contains(fmt.Sprint(meta), "provision-protected:true") {
		t.Fatalf("the index's _meta lacks the protection: %v", meta)
	}

	// 2. Hand edits: a meta key and the panels under ignore_changes are no
	// drift; a key written with a plain PUT (no flags, so no mark in
	// them) is one update of an owned key.
	s := service()
	meta := s["Meta"].(map[string]any)
	meta["owner"] = "ops"
	reg, _ := json.Marshal(map[string]any{"ID": "own-api", "Name": s["Service"], "Port": s["Port"], "Tags": s["Tags"], "Meta": meta})
	consulDo(t, agent.Addr, "PUT", "/v1/agent/service/register", string(reg))
	src := doc()["_source"].(map[string]any)
	src["panelsJSON"] = `[{"id":"arranged-by-hand","type":"search","panelIndex":1}]`
	body, _ := json.Marshal(src)
	req, _ := http.NewRequest("PUT", es.URL+"/own-dashboards/dashboard/edge", strings.NewReader(string(body)))
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode >= 300 {
		t.Fatalf("editing the document by hand: %v %v", resp, err)
	}
	consulDo(t, agent.Addr, "PUT", "/v1/kv/apps/own/limits", `{"rate": 5}`)
	if got := planned(); strings.Join(got, ";") != `update key["apps/own/limits"]` {
		t.Fatalf("after the hand edits the plan is %q, want the key's update alone", got)
	}
	for _, c := range last.Changes {
		want := map[string]string{"service.own-api": `[meta["owner"]]`, `document["own-dashboards/dashboard/edge"]`: "[source.panelsJSON]"}[c.Addr.String()]
		if got := fmt.Sprint(c.Ignored); c.Addr.Name != "own-other" && c.Addr.Name != "apps/own/other" && (!c.Protected || got != cmp.Or(want, "[]")) {
			t.Errorf("%s in the JSON plan: protected %t, ignored %s; want protected, ignored %s", c.Addr, c.Protected, got, cmp.Or(want, "[]"))
		}
	}

	// 3. An update of the other fields keeps the hand-made values.
	write(ownershipSpec("Edge 2", 18601, ""))
	run(exitOK, "apply", "-auto-approve")
	if got := fmt.Sprint(doc()["_source"].(map[string]any)["panelsJSON"]); !strings.Contains(got, "arranged-by-hand") {
		t.Errorf("the update of the title lost the panels arranged by hand: %s", got)
	}
	if m := service()["Meta"].(map[string]any); m["owner"] != "ops" || service()["Port"] != float64(18601) {
		t.Errorf("the update of the port lost the meta written by hand: %v", service())
	}
	if v, flags, _ := key(); v != `{"rate":100}` || flags>>48 == 0 {
		t.Errorf("the key was not written back with its mark: %q, flags %x", v, flags)
	}
	if got := planned(); len(got) != 0 {
		t.Fatalf("not converged: %q", got)
	}

	// 4. The blocks are removed: plan, apply and destroy refuse, live and
	// from a snapshot, and nothing is deleted.
	write(ownershipSpec("Edge 2", 18601, "", "service", "key", "document"))
	snap := filepath.Join(t.TempDir(), "snap.json")
	run(exitOK, "snapshot", "-out", snap)
	doc3 := []string{"service.own-api", `key["apps/own/limits"]`, `document["own-dashboards/dashboard/edge"]`}
	for _, tt := range []struct {
		args  []string
		addrs []string
	}{
		{[]string{"plan"}, doc3},
		{[]string{"plan", "-snapshot", snap}, doc3},
		{[]string{"apply", "-auto-approve"}, doc3},
		// destroy deletes indices (and their documents with them) only with -indices
		{[]string{"destroy", "-auto-approve", "-indices"}, []string{"service.own-api", `key["apps/own/limits"]`, "index.own-dashboards"}},
	} {
		_, errOut := run(exitError, tt.args...)
		for _, addr := range tt.addrs {
			if !strings.Contains(errOut, "Protected object would be deleted") || !strings.Contains(errOut, "The plan deletes "+addr) {
				t.Errorf("provision %v does not refuse to delete %s:\n%s", tt.args, addr, errOut)
			}
		}
	}
	write(ownershipSpec("Edge 2", 18601, "", "service", "key", "document", "index"))
	if _, errOut := run(exitError, "plan", "-prune-indices"); !strings.Contains(errOut, "The plan deletes index.own-dashboards") {
		t.Errorf("plan -prune-indices does not refuse to delete the protected index:\n%s", errOut)
	}
	if service() == nil || doc() == nil || get(es.URL+"/own-dashboards") == nil {
		t.Fatal("a protected object was deleted")
	}
	if _, _, ok := key(); !ok {
		t.Fatal("the protected key was deleted")
	}

	// 5. A removed block that deletes is refused while protected; one that
	// lets go forgets each object: its marks are taken off, it stays.
	removed := func(destroy bool) string {
		var b strings.Builder
		for _, addr := range []string{"service.own-api", `key["apps/own/limits"]`, `document["own-dashboards/dashboard/edge"]`, "index.own-dashboards"} {
			fmt.Fprintf(&b, "removed {\n  from = %s\n  lifecycle {\n    destroy = %t\n  }\n}\n\n", addr, destroy)
		}
		return b.String()
	}
	write(ownershipSpec("", 0, removed(true), "service", "key", "document", "index"))
	// (The document goes with its index, not apart.)
	if _, errOut := run(exitError, "plan"); strings.Count(errOut, "Protected object would be deleted") != 3 || !strings.Contains(errOut, "The plan deletes index.own-dashboards") {
		t.Errorf("removed blocks with destroy = true are not refused for the service, the key and the index:\n%s", errOut)
	}
	write(ownershipSpec("", 0, removed(false), "service", "key", "document", "index"))
	forget := []string{`forget document["own-dashboards/dashboard/edge"]`, `forget index.own-dashboards`, `forget key["apps/own/limits"]`, "forget service.own-api"}
	run(exitOK, "snapshot", "-out", snap)
	for _, args := range [][]string{nil, {"-snapshot", snap}} {
		got := planned(args...)
		if slices.Sort(got); !slices.Equal(got, forget) {
			t.Errorf("plan %v with removed blocks: %q, want %q", args, got, forget)
		}
	}
	// The panels arranged again just before the apply (the search that
	// finds the project's documents sees that a second late): the forget
	// reads the document in real time, and keeps the edit.
	update, _ := http.NewRequest("POST", es.URL+"/own-dashboards/dashboard/edge/_update", strings.NewReader(`{"doc":{"panelsJSON":"[{\"id\":\"arranged-again\",\"type\":\"search\",\"panelIndex\":1}]"}}`))
	if resp, err := http.DefaultClient.Do(update); err != nil || resp.StatusCode >= 300 {
		t.Fatalf("arranging the panels again: %v %v", resp, err)
	}
	out, _ := run(exitOK, "apply", "-auto-approve")
	if !strings.Contains(out, "4 forgotten") {
		t.Errorf("apply does not say what it forgot:\n%s", out)
	}
	if m, _ := service()["Meta"].(map[string]any); m["owner"] != "ops" || m["managed-by"] != nil || m["provision-protected"] != nil {
		t.Errorf("the forgotten service: %v", service())
	}
	if v, flags, ok := key(); !ok || v != `{"rate":100}` || flags != 0 || record() != "" {
		t.Errorf("the forgotten key: %q, flags %x, record %q", v, flags, record())
	}
	if src, _ := doc()["_source"].(map[string]any); src == nil || src["provision"] != nil || src["title"] != "Edge 2" || !strings.Contains(fmt.Sprint(src["panelsJSON"]), "arranged-again") {
		t.Errorf("the forgotten document: %v", doc())
	}
	if meta := get(es.URL + "/own-dashboards/_mapping"); strings.Contains(fmt.Sprint(meta), "provision-project:own") {
		t.Errorf("the forgotten index keeps its marks: %v", meta)
	}

	// The removed blocks have done their work: each says so, and nothing is planned.
	if got := planned(); len(got) != 0 || len(last.Diagnostics) != 4 {
		t.Errorf("after the forget, the removed blocks plan %q with %d warnings, want none and 4", got, len(last.Diagnostics))
	}

	// 6. Without the removed blocks, the objects are made by hand now: no
	// plan changes them.
	write(ownershipSpec("", 0, "", "service", "key", "document", "index"))
	if got := planned("-prune-indices"); len(got) != 0 {
		t.Errorf("the forgotten objects are planned: %q", got)
	}

	// 7. A protected document in an index that is not protected: deleting
	// the index would delete the document, so it is refused as the
	// document's own delete is, with the index's block there (destroy
	// -indices) and once it is gone (-prune-indices), live and from a
	// snapshot.
	held := `index "own-held" {
  search = "t1"
  mapping "panel" {
    properties = { title = "string" }
  }
}

document "panel" "held" {
  source = { title = "Held" }
  lifecycle {
    prevent_destroy = true
  }
}
`
	write(ownershipSpec("", 0, held, "service", "key", "document", "index"))
	run(exitOK, "apply", "-auto-approve")
	refused := func(errOut string) bool {
		return strings.Contains(errOut, "The plan deletes index.own-held") && strings.Contains(errOut, "it holds the protected document panel/held")
	}
	if _, errOut := run(exitError, "destroy", "-auto-approve", "-indices"); !refused(errOut) {
		t.Errorf("destroy -indices does not refuse to delete the index that holds a protected document:\n%s", errOut)
	}
	write(ownershipSpec("", 0, "", "service", "key", "document", "index"))
	run(exitOK, "snapshot", "-out", snap)
	for _, args := range [][]string{{"plan", "-prune-indices"}, {"plan", "-prune-indices", "-snapshot", snap}, {"apply", "-auto-approve", "-prune-indices"}} {
		if _, errOut := run(exitError, args...); !refused(errOut) {
			t.Errorf("provision %v does not refuse to delete the undeclared index that holds a protected document:\n%s", args, errOut)
		}
	}
	if get(es.URL+"/own-held/panel/held") == nil {
		t.Fatal("the protected document went with its index")
	}
}
