package servers

import (
	"encoding/json"
	"testing"
)

// kibanaFields are the fields each saved-object type of Kibana 4.x saves:
// the mapping of its class (src/ui/public/index_patterns/_index_pattern.js;
// src/plugins/kibana/public/discover/saved_searches/_saved_search.js,
// visualize/saved_visualizations/_saved_vis.js and
// dashboard/services/_saved_dashboard.js). The last three also save the
// search source's meta (kibanaSavedObjectMeta, dashboardSavedObjectMeta
// in the seed).
var kibanaFields = map[string][]string{
	"index-pattern": {"title", "timeFieldName", "notExpandable", "intervalName", "fields", "fieldFormatMap"},
	"search":        {"title", "description", "hits", "columns", "sort", "version"},
	"visualization": {"title", "visState", "uiStateJSON", "description", "savedSearchId", "version"},
	"dashboard":     {"title", "hits", "description", "panelsJSON", "optionsJSON", "uiStateJSON", "version", "timeRestore", "timeTo", "timeFrom"},
}

// KibanaSave does to the saved object at url (<member>/<index>/<type>/<id>)
// what the dashboard tool does when a person saves it, after edit has
// changed the object's fields: Kibana 4.x's SavedObject.serialize
// (src/ui/public/courier/saved_object/saved_object.js) builds the body
// from each field of the type's mapping that the object holds, plus the
// search source's meta, and save indexes that body whole, with no version
// (docSource.doIndex). It keeps the type's fields and the meta, and drops
// everything else of the stored source, provision's marks among them. It
// leaves out what the class's defaults would add to an object that lacks
// a field (optionsJSON, uiStateJSON, ...): the specs here declare what
// the tool would write.
func KibanaSave(t testing.TB, url string, edit func(map[string]any)) {
	t.Helper()
	var doc struct {
		Type   string         `json:"_type"`
		Source map[string]any `json:"_source"`
	}
	if code, answer := Curl(t, "GET", url, ""); code != 200 || json.Unmarshal([]byte(answer), &doc) != nil {
		t.Fatalf("GET %s: %d %s", url, code, answer)
	}
	body := map[string]any{}
	for _, f := range kibanaFields[doc.Type] {
		if v, ok := doc.Source[f]; ok && v != nil {
			body[f] = v
		}
	}
	if meta, ok := doc.Source["dashboardSavedObjectMeta"]; ok && doc.Type != "index-pattern" {
		body["dashboardSavedObjectMeta"] = meta
	}
	edit(body)
	b, _ := json.Marshal(body)
	if code, answer := Curl(t, "PUT", url+"?refresh=true", string(b)); code/100 != 2 {
		t.Fatalf("PUT %s: %d %s", url, code, answer)
	}
}
