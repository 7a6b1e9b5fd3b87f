package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/provision/servers"
)

// popularize does what Kibana 4.x's IndexPattern.popularizeField
// (src/ui/public/index_patterns/_index_pattern.js) does when a person adds
// the field name as a column in Discover: its count in the pattern's
// fields goes up by one, and the pattern is saved as servers.KibanaSave saves.
func popularize(t *testing.T, url, name string) {
	t.Helper()
	servers.KibanaSave(t, url, func(body map[string]any) {
		var fields []map[string]any
		if err := json.Unmarshal([]byte(body["fields"].(string)), &fields); err != nil {
			t.Fatal(err)
		}
		for _, f := range fields {
			if f["name"] == name {
				n, _ := f["count"].(float64)
				f["count"] = n + 1
			}
		}
		b, _ := json.Marshal(fields)
		body["fields"] = string(b)
	})
}

// esCall sends one request to Elasticsearch and decodes a 2xx answer into
// v; any other answer fails the test.
func esCall(t *testing.T, method, url, body string, v any) {
	t.Helper()
	code, answer := servers.Curl(t, method, url, body)
	if code/100 != 2 {
		t.Fatalf("%s %s: %d %s", method, url, code, answer)
	}
	if v != nil {
		if err := json.Unmarshal([]byte(answer), v); err != nil {
			t.Fatal(err)
		}
	}
}

// toolSpec is the seed's .dashboard and four saved objects, the
// dashboard protected; tail is added at the end, drop leaves out the
// documents of those types.
func toolSpec(title, tail string, drop ...string) string {
	docs := map[string]string{
		"index-pattern": `document "index-pattern" "logs-*" {
  source = {
    title         = "logs-*"
    timeFieldName = "@timestamp"
    fields = [
      { name = "@timestamp", type = "date", count = 0, scripted = false, indexed = true, analyzed = false, doc_values = true },
      { name = "level", type = "string", count = 0, scripted = false, indexed = true, analyzed = false, doc_values = true },
    ]
  }
}
`,
		"search": `document "search" "errors" {
  source = {
    title   = "Errors"
    columns = ["level"]
    sort    = ["@timestamp", "desc"]
    hits    = 0
    version = 1
    "dashboardSavedObjectMeta.searchSourceJSON" = { index = "logs-*", query = { query_string = { query = "level:error" } }, filter = [] }
  }
}
`,
		"visualization": `document "visualization" "rate" {
  source = {
    title         = "Error rate"
    version       = 1
    savedSearchId = document.search.errors.id
    visState      = { title = "Error rate", type = "line", params = {}, aggs = [] }
    "dashboardSavedObjectMeta.searchSourceJSON" = { filter = [] }
  }
}
`,
		"dashboard": fmt.Sprintf(`document "dashboard" "edge" {
  source = {
    title      = %q
    hits       = 0
    version    = 1
    panelsJSON = [{ id = document.visualization.rate.id, type = "visualization", panelIndex = 1 }]
    "dashboardSavedObjectMeta.searchSourceJSON" = { filter = [] }
  }
  lifecycle {
    prevent_destroy = true
  }
}
`, title),
	}
	var b strings.Builder
	b.WriteString(`project = "tool"

variable "search_url" {
  type = string
}

variable "tribe_url" {
  type = string
}

search "t1" {
  url          = var.search_url
  cluster_name = "t1"
  tribe_url    = var.tribe_url
}

index ".dashboard" {
  search = "t1"
  mapping "index-pattern" {
    properties = { title = "string", timeFieldName = "string", intervalName = "string", fields = "string", fieldFormatMap = "string" }
  }
  mapping "search" {
    properties = { title = "string", description = "string", hits = "integer", columns = "string", sort = "string", version = "integer", "dashboardSavedObjectMeta.searchSourceJSON" = "string" }
  }
  mapping "visualization" {
    properties = { title = "string", visState = "string", uiStateJSON = "string", description = "string", savedSearchId = "string", version = "integer", "dashboardSavedObjectMeta.searchSourceJSON" = "string" }
  }
  mapping "dashboard" {
    properties = { title = "string", hits = "integer", description = "string", panelsJSON = "string", optionsJSON = "string", uiStateJSON = "string", version = "integer", timeRestore = "boolean", timeFrom = "string", timeTo = "string", "dashboardSavedObjectMeta.searchSourceJSON" = "string" }
  }
}

`)
	for _, typ := range []string{"index-pattern", "search", "visualization", "dashboard"} {
		if !slices.Contains(drop, typ) {
			b.WriteString(docs[typ] + "\n")
		}
	}
	return b.String() + tail
}

// TestOwnershipSurvivesTheToolsSave: on a real Elasticsearch 2.4.1 behind
// a read-only tribe node, the dashboard tool's own save (servers.KibanaSave, which
// drops provision's marks from the source) is an edit of a document the
// project owns, not a take-over: the plan shows it, pull brings it back,
// prevent_destroy and removed blocks still work, a saved plan is stale
// after it, a snapshot plans as live; a field's popularity count is no
// change; a document made in the tool is left alone; and a project whose
// documents have their marks but no record (written before records) keeps
// them, the next apply writing the records.
func TestOwnershipSurvivesTheToolsSave(t *testing.T) {
	agent := servers.NewConsul(t)
	tribe := servers.NewTribe(t)
	sd := newSpecsDir(t, map[string]string{"CONSUL_HTTP_ADDR": agent.Addr, "NO_COLOR": "1"},
		"-var", "search_url="+tribe.T1.URL, "-var", "tribe_url="+tribe.Tribe.URL)
	write, run, dir, env, vars := sd.write, sd.run, sd.dir, sd.env, sd.vars
	planned := func(args ...string) []string {
		t.Helper()
		return changed(sd.plan(args...), func(c *plans.Change) string { return c.Action.String() + " " + c.Addr.Name + " (" + c.Reason + ")" })
	}
	doc := func(typ, id string) string { return tribe.T1.URL + "/.dashboard/" + typ + "/" + id }
	source := func(typ, id string) map[string]any {
		var d struct {
			Source map[string]any `json:"_source"`
		}
		esCall(t, "GET", doc(typ, id), "", &d)
		return d.Source
	}

	// 1. Applied and proved through the tribe; the next plan is empty.
	write(toolSpec("Edge", ""))
	out, _ := run(exitOK, "apply", "-auto-approve")
	if !strings.Contains(out, "4 documents are served through the tribe node") {
		t.Errorf("the apply's proof through the tribe:\n%s", out)
	}
	if got := planned(); len(got) != 0 {
		t.Fatalf("not converged after the apply: %q", got)
	}

	// 2. The dashboard saved in the tool with a new title, and the index
	// pattern's level field popularized twice: the marks are gone from
	// both sources.
	servers.KibanaSave(t, doc("dashboard", "edge"), func(b map[string]any) { b["title"] = "Edge (saved in the tool)" })
	popularize(t, doc("index-pattern", "logs-*"), "level")
	popularize(t, doc("index-pattern", "logs-*"), "level")
	for _, typ := range []string{"dashboard", "index-pattern"} {
		if src := source(typ, map[string]string{"dashboard": "edge", "index-pattern": "logs-*"}[typ]); src["provision"] != nil {
			t.Fatalf("the tool's save kept the marks of the %s: %v", typ, src)
		}
	}

	// 3. The plan shows the tool's change as an update; the raised count
	// is none.
	if got := planned(); !slices.Equal(got, []string{"update .dashboard/dashboard/edge (its source differs from the declared one)"}) {
		t.Fatalf("after a save in the tool the plan is %q, want the dashboard's update alone", got)
	}
	text, _ := run(exitOK, "plan")
	if !strings.Contains(text, `~ title = "Edge (saved in the tool)" -> "Edge"`) {
		t.Errorf("the plan does not show the title saved in the tool:\n%s", text)
	}

	// 4. A saved plan made before a save in the tool is stale.
	planFile := filepath.Join(t.TempDir(), "tool.plan")
	run(exitOK, "plan", "-out", planFile)
	servers.KibanaSave(t, doc("dashboard", "edge"), func(b map[string]any) { b["description"] = "saved again" })
	if code, outS, errS := runCLI(t, env, append(append([]string{"apply"}, vars...), planFile)...); code != exitError || !strings.Contains(errS, "Saved plan cannot be applied") {
		t.Errorf("the saved plan applied after a save in the tool: exit %d\n%s%s", code, outS, errS)
	}

	// 5. A snapshot taken after the save plans offline as the live plan.
	snap := filepath.Join(t.TempDir(), "snap.json")
	run(exitOK, "snapshot", "-out", snap)
	if live, offline := planned(), planned("-snapshot", snap); !slices.Equal(live, offline) {
		t.Errorf("from the snapshot the plan is %q, live %q", offline, live)
	}

	// 6. pull brings the tool's edits back; then nothing is planned.
	diff, _ := run(exitOK, "pull", "-diff")
	if !regexp.MustCompile(`\+ +title += "Edge \(saved in the tool\)"`).MatchString(diff) || !regexp.MustCompile(`\+ +description += "saved again"`).MatchString(diff) {
		t.Errorf("pull -diff does not bring back the tool's edits:\n%s", diff)
	}
	run(exitOK, "pull")
	if got := planned(); len(got) != 0 {
		t.Fatalf("after pull the plan is %q, want none", got)
	}
	spec, _ := os.ReadFile(filepath.Join(dir, "main.hcl"))

	// 7. A change of what a field is still plans, the count kept.
	servers.KibanaSave(t, doc("index-pattern", "logs-*"), func(b map[string]any) {
		b["fields"] = strings.Replace(b["fields"].(string), `"name":"level","scripted":false,"type":"string"`, `"name":"level","scripted":false,"type":"number"`, 1)
	})
	if got := planned(); !slices.Equal(got, []string{"update .dashboard/index-pattern/logs-* (its source differs from the declared one)"}) {
		t.Fatalf("a field's type changed in the tool plans %q", got)
	}
	run(exitOK, "apply", "-auto-approve")
	if f := source("index-pattern", "logs-*")["fields"].(string); !strings.Contains(f, `"count":2`) || !strings.Contains(f, `"type":"string"`) {
		t.Errorf("the apply of the index pattern lost the count or kept the tool's type: %s", f)
	}

	// 8. A dashboard made in the tool from scratch is the tool's.
	esCall(t, "PUT", doc("dashboard", "AWmade-in-the-tool")+"?refresh=true", `{"title":"Made in the tool","hits":0,"panelsJSON":"[]","version":1}`, nil)

	// 9. The protected dashboard's block removed (saved in the tool
	// again first): refused; a removed block lets it go.
	servers.KibanaSave(t, doc("dashboard", "edge"), func(b map[string]any) { b["description"] = "before the removal" })
	noDashboard := strings.Replace(string(spec), toolDashboard(string(spec)), "", 1)
	write(noDashboard)
	if _, errOut := run(exitError, "plan"); !strings.Contains(errOut, "Protected object would be deleted") {
		t.Errorf("the removal of the protected dashboard saved in the tool is not refused:\n%s", errOut)
	}
	write(noDashboard + "removed {\n  from = document[\".dashboard/dashboard/edge\"]\n  lifecycle {\n    destroy = false\n  }\n}\n")
	if got := planned(); len(got) != 1 || !strings.HasPrefix(got[0], "forget .dashboard/dashboard/edge (the removed block at ") {
		t.Errorf("with the removed block the plan is %q", got)
	}
	run(exitOK, "apply", "-auto-approve")
	write(noDashboard)
	if got := planned(); len(got) != 0 {
		t.Errorf("the forgotten dashboard is still planned: %q", got)
	}

	// 10. The visualization saved in the tool, then its block removed: it
	// is deleted (the dashboard that named it was let go).
	servers.KibanaSave(t, doc("visualization", "rate"), func(b map[string]any) { b["title"] = "Rate" })
	write(strings.Replace(noDashboard, toolBlock(noDashboard, `document "visualization"`), "", 1))
	if got := planned(); !slices.Equal(got, []string{"delete .dashboard/visualization/rate (owned by project tool and no longer declared)"}) {
		t.Fatalf("with the visualization's block removed the plan is %q", got)
	}
	run(exitOK, "apply", "-auto-approve")
	for path, want := range map[string]int{"visualization/rate": 404, "dashboard/edge": 200, "dashboard/AWmade-in-the-tool": 200} {
		resp, err := http.Get(tribe.T1.URL + "/.dashboard/" + path)
		if err != nil || resp.StatusCode != want {
			t.Errorf("GET %s: %v %v, want %d", path, resp.Status, err, want)
		}
	}

	// 11. The search deleted by hand, and its block removed: its record is
	// deleted, so that it owns nothing made at its path later.
	esCall(t, "DELETE", doc("search", "errors")+"?refresh=true", "", nil)
	noSearch := strings.Replace(noDashboard, toolBlock(noDashboard, `document "visualization"`), "", 1)
	noSearch = strings.Replace(noSearch, toolBlock(noSearch, `document "search"`), "", 1)
	write(noSearch)
	if got := planned(); !slices.Equal(got, []string{"forget .dashboard/search/errors (the document was deleted outside provision; its ownership record is deleted)"}) {
		t.Fatalf("with the search deleted by hand the plan is %q", got)
	}
	run(exitOK, "apply", "-auto-approve")
	esCall(t, "PUT", doc("search", "errors")+"?refresh=true", `{"title":"Made again by hand","hits":0,"version":1}`, nil)
	if got := planned(); len(got) != 0 {
		t.Errorf("the search made again by hand is planned: %q", got)
	}

	// 12. The index pattern protected, then not (prevent_destroy = false:
	// a protection holds until a block says so): each is one apply, and
	// the next plan is empty.
	pattern := toolBlock(noSearch, `document "index-pattern"`)
	protect := func(on bool) string {
		return strings.Replace(noSearch, pattern, strings.TrimSuffix(pattern, "}\n")+fmt.Sprintf("  lifecycle {\n    prevent_destroy = %t\n  }\n}\n", on), 1)
	}
	for _, spec := range []string{protect(true), protect(false)} {
		write(spec)
		run(exitOK, "apply", "-auto-approve")
		if got := planned(); len(got) != 0 {
			t.Fatalf("one apply did not converge the protection: %q", got)
		}
	}
	write(strings.Replace(noSearch, pattern, "", 1))
	if got := planned(); !slices.Equal(got, []string{"delete .dashboard/index-pattern/logs-* (owned by project tool and no longer declared)"}) {
		t.Errorf("the index pattern no longer protected is not deleted with its block: %q", got)
	}
	write(noSearch)

	// 13. Documents written before records: their marks alone own them.
	// The next plan says the records are written; after the apply, none.
	esCall(t, "DELETE", tribe.T1.URL+"/.provision", "", nil)
	got := planned()
	if !slices.Equal(got, []string{"update .dashboard/index-pattern/logs-* (its ownership record is written)"}) {
		t.Fatalf("without records the plan is %q, want the index pattern's record written", got)
	}
	run(exitOK, "apply", "-auto-approve")
	if got := planned(); len(got) != 0 {
		t.Errorf("after the records were written the plan is %q", got)
	}

	// 14. destroy -indices deletes the index, and the records of the
	// documents it held with it (shown in its plan as sent).
	_, shown, _ := runCLI(t, env, append(append([]string{"destroy", "-indices"}, vars...), dir)...)
	for _, want := range []string{"request 2 of 2: POST /_bulk", `{"delete":{"_index":".provision","_type":"document","_id":".dashboard/index-pattern/logs-*"}}`} {
		if !strings.Contains(shown, want) {
			t.Errorf("the destroy plan lacks %s:\n%s", want, shown)
		}
	}
	run(exitOK, "destroy", "-auto-approve", "-indices")
	var records struct {
		Hits struct {
			Total int `json:"total"`
		} `json:"hits"`
	}
	esCall(t, "GET", tribe.T1.URL+"/.provision/document/_search", "", &records)
	if records.Hits.Total != 0 {
		t.Errorf("%d records are left after destroy -indices", records.Hits.Total)
	}
}

// toolDashboard is the dashboard block of spec.
func toolDashboard(spec string) string { return toolBlock(spec, `document "dashboard"`) }

// toolBlock is the block of spec that starts with head, to its closing
// brace at the start of a line.
func toolBlock(spec, head string) string {
	i := strings.Index(spec, head)
	if i < 0 {
		return ""
	}
	j := strings.Index(spec[i:], "\n}\n")
	return spec[i : i+j+3]
}
