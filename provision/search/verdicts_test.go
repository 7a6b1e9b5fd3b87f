package search

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/hashicorp/hcl/v2"

	"github.com/provision-dev/provision/provision/addrs"
	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/schema"
)

// verdictTypes are the field types of Elasticsearch 2.x's mapping
// reference (core, complex, geo and specialised), and two of 5.x's.
var verdictTypes = []string{"string", "long", "integer", "short", "byte", "double", "float", "date", "boolean", "binary",
	"object", "nested", "geo_point", "geo_shape", "ip", "completion", "token_count", "text", "keyword"}

// verdictParams are the mapping parameters of the 2.x reference (and a
// typo), each with values the server takes for some type and values it
// takes for none.
var verdictParams = map[string][]any{
	"analyzer":                     {"standard", "english", "custom_words", "no_such_analyzer"},
	"analyser":                     {"simple"},
	"search_analyzer":              {"simple"},
	"boost":                        {2.0, "high"},
	"coerce":                       {false},
	"copy_to":                      {"all_text"},
	"doc_values":                   {true, false},
	"dynamic":                      {"strict", "sometimes"},
	"enabled":                      {false},
	"fielddata":                    {map[string]any{"format": "disabled"}, map[string]any{"format": "pretend"}},
	"fields":                       {map[string]any{"raw": map[string]any{"type": "string", "index": "not_analyzed"}}},
	"format":                       {"yyyy-MM-dd", "epoch_millis", "nonsense-QQ"},
	"ignore_above":                 {256, "long"},
	"ignore_malformed":             {true},
	"include_in_all":               {false},
	"index":                        {"analyzed", "not_analyzed", "no", "yes", true},
	"index_options":                {"docs", "offsets", "everything"},
	"lat_lon":                      {true},
	"norms":                        {map[string]any{"enabled": false}, false},
	"null_value":                   {"NULL", 0},
	"position_increment_gap":       {100},
	"precision_step":               {4},
	"similarity":                   {"BM25", "no_such_similarity"},
	"store":                        {true, "sometimes"},
	"term_vector":                  {"with_positions_offsets", "always"},
	"tree":                         {"quadtree"},
	"include_in_parent":            {true},
	"payloads":                     {true},
	"max_input_length":             {50},
	"properties":                   {map[string]any{"inner": map[string]any{"type": "string"}}},
	"include_in_root":              {true},
	"geohash":                      {true},
	"geohash_prefix":               {true},
	"geohash_precision":            {5},
	"validate":                     {true},
	"normalize":                    {true},
	"precision":                    {"1km"},
	"tree_levels":                  {5},
	"strategy":                     {"recursive"},
	"distance_error_pct":           {0.025},
	"orientation":                  {"ccw"},
	"points_only":                  {true},
	"preserve_separators":          {false},
	"preserve_position_increments": {false},
	"path":                         {"just_name"},
	"normalizer":                   {"lowercase"},
	"eager_global_ordinals":        {true},
	"scaling_factor":               {10},
}

// verdictAnalyzers are analyzer names for a string field: those an
// Elasticsearch 2.x node may have built in, and some it may not.
var verdictAnalyzers = []string{"standard", "default", "simple", "whitespace", "stop", "keyword", "pattern", "classic", "snowball", "standard_html_strip",
	"arabic", "armenian", "basque", "brazilian", "bulgarian", "catalan", "chinese", "cjk", "czech", "danish", "dutch", "english", "finnish", "french",
	"galician", "german", "greek", "hindi", "hungarian", "indonesian", "irish", "italian", "latvian", "lithuanian", "norwegian", "persian", "portuguese",
	"romanian", "russian", "sorani", "spanish", "swedish", "turkish", "thai", "fingerprint", "icu_analyzer", "kuromoji", "Standard"}

// verdictFormats are date formats: the named ones of the 2.x reference,
// Joda patterns, alternatives, and some that are neither.
var verdictFormats = []string{"epoch_millis", "epoch_second", "date_optional_time", "strict_date_optional_time", "basic_date", "basic_date_time",
	"basic_date_time_no_millis", "basic_ordinal_date", "basic_ordinal_date_time", "basic_ordinal_date_time_no_millis", "basic_time", "basic_time_no_millis",
	"basic_t_time", "basic_t_time_no_millis", "basic_week_date", "strict_basic_week_date", "basic_week_date_time", "strict_basic_week_date_time",
	"basic_week_date_time_no_millis", "strict_basic_week_date_time_no_millis", "date", "strict_date", "date_hour", "strict_date_hour", "date_hour_minute",
	"strict_date_hour_minute", "date_hour_minute_second", "strict_date_hour_minute_second", "date_hour_minute_second_fraction",
	"strict_date_hour_minute_second_fraction", "date_hour_minute_second_millis", "strict_date_hour_minute_second_millis", "date_time", "strict_date_time",
	"date_time_no_millis", "strict_date_time_no_millis", "hour", "strict_hour", "hour_minute", "strict_hour_minute", "hour_minute_second",
	"strict_hour_minute_second", "hour_minute_second_fraction", "strict_hour_minute_second_fraction", "hour_minute_second_millis",
	"strict_hour_minute_second_millis", "ordinal_date", "strict_ordinal_date", "ordinal_date_time", "strict_ordinal_date_time",
	"ordinal_date_time_no_millis", "strict_ordinal_date_time_no_millis", "time", "strict_time", "time_no_millis", "strict_time_no_millis", "t_time",
	"strict_t_time", "t_time_no_millis", "strict_t_time_no_millis", "week_date", "strict_week_date", "week_date_time", "strict_week_date_time",
	"week_date_time_no_millis", "strict_week_date_time_no_millis", "weekyear", "strict_weekyear", "weekyear_week", "strict_weekyear_week",
	"weekyear_week_day", "strict_weekyear_week_day", "year", "strict_year", "year_month", "strict_year_month", "year_month_day", "strict_year_month_day",
	"yyyy-MM-dd'T'HH:mm:ss", "dd/MM/yyyy||epoch_millis", "yyyy-MM-dd HH:mm:ss.SSSZ", "EEE, dd MMM yyyy HH:mm:ss Z", "G C Y x w e E y D M d a K h H k m s S z Z",
	"'week' ww", "QQ", "bogus_format_name", "yyyy-MM-dd||", "yyyy-MM-dd||nonsense", "", "uuuu-MM-dd", "8yyyy"}

// verdictSettings are the probe indices' settings: an analyzer defined
// in them (custom_words), as a spec's settings declare one.
var verdictSettings = map[string]any{"analysis": map[string]any{"analyzer": map[string]any{"custom_words": map[string]any{"type": "custom", "tokenizer": "whitespace"}}}}

// TestMappingVerdicts: every field type of the 2.x mapping reference
// crossed with every mapping parameter and its values, and the analysis
// joins (search_analyzer beside analyzer, an analyzer of the index's
// settings), each created on a real Elasticsearch 2.4.1 and judged by
// validate and the plan against the same server: the server's verdict,
// read here for each case, is the expectation, and the plan must pass
// exactly what the server takes. A refused case never reaches a write
// (the plan refuses it, so nothing is sent).
func TestMappingVerdicts(t *testing.T) {
	url := cluster(t).T1.URL
	type verdict struct {
		field  map[string]any
		server string // "" when it takes the mapping
		plan   string // "" when validate and the plan pass it
	}
	var cases []map[string]any
	for _, typ := range verdictTypes {
		for _, p := range slices.Sorted(maps.Keys(verdictParams)) {
			for _, v := range verdictParams[p] {
				cases = append(cases, map[string]any{"type": typ, p: v})
			}
		}
		cases = append(cases, map[string]any{"type": typ})
		cases = append(cases, map[string]any{"type": typ, "search_analyzer": "simple", "analyzer": "standard"})
		cases = append(cases, map[string]any{"type": typ, "index": "not_analyzed", "doc_values": true})
		cases = append(cases, map[string]any{"type": typ, "index": "no", "doc_values": true})
	}
	// token_count takes nothing without an analyzer: its parameters
	// again, each beside one.
	for _, p := range slices.Sorted(maps.Keys(verdictParams)) {
		for _, v := range verdictParams[p] {
			if p != "analyzer" {
				cases = append(cases, map[string]any{"type": "token_count", "analyzer": "standard", p: v})
			}
		}
	}
	for _, a := range verdictAnalyzers {
		cases = append(cases, map[string]any{"type": "string", "analyzer": a})
	}
	for _, f := range verdictFormats {
		cases = append(cases, map[string]any{"type": "date", "format": f})
	}
	for _, typ := range FieldTypes {
		if !slices.Contains(verdictTypes, typ) {
			cases = append(cases, map[string]any{"type": typ})
		}
	}
	// Multi-fields and object properties are field mappings too.
	cases = append(cases,
		map[string]any{"type": "string", "fields": map[string]any{"raw": map[string]any{"type": "string", "index": "yes"}}},
		map[string]any{"type": "string", "fields": map[string]any{"raw": map[string]any{"type": "string", "doc_values": true}}},
		map[string]any{"type": "string", "fields": map[string]any{"len": map[string]any{"type": "token_count"}}},
		map[string]any{"type": "string", "fields": map[string]any{"raw": map[string]any{"type": "keyword"}}},
		map[string]any{"type": "string", "fields": map[string]any{"raw": "string"}},
		map[string]any{"type": "object", "properties": map[string]any{"inner": map[string]any{"type": "integer", "analyzer": "standard"}}},
		map[string]any{"type": "nested", "properties": map[string]any{"inner": map[string]any{"type": "date", "format": "QQ"}}},
		map[string]any{"properties": map[string]any{"inner": map[string]any{"type": "string", "index": "yes"}}},
	)
	var verdicts []verdict
	for i, f := range cases {
		index := fmt.Sprintf("verdict-%d", i)
		body, _ := json.Marshal(map[string]any{"settings": verdictSettings, "mappings": map[string]any{"doc": map[string]any{"properties": map[string]any{"f": f, "all_text": map[string]any{"type": "string"}}}}})
		code, answer := esStatus(t, url, "PUT", "/"+index, string(body))
		v := verdict{field: f}
		if code != http.StatusOK {
			v.server = reason(answer)
		} else {
			esStatus(t, url, "DELETE", "/"+index, "")
		}
		v.plan = planVerdict(t, index, f)
		verdicts = append(verdicts, v)
	}
	var alike, passed, refused int
	for _, v := range verdicts {
		switch {
		case (v.server == "") == (v.plan == ""):
			alike++
		case v.plan == "":
			passed++
			t.Errorf("%s: the server refuses it (%s); validate and the plan pass it", plans.Compact(v.field), v.server)
		default:
			refused++
			t.Errorf("%s: the server takes it; provision refuses it: %s", plans.Compact(v.field), v.plan)
		}
	}
	t.Logf("%d mappings: %d judged alike, %d the server refuses passed, %d it takes refused", len(verdicts), alike, passed, refused)
}

// planVerdict is what validate and then the plan (against the real
// server, which has no such index) say of an index whose field f is:
// "" when both pass it.
func planVerdict(t *testing.T, index string, f map[string]any) string {
	t.Helper()
	settings, _ := json.Marshal(verdictSettings)
	spec := fmt.Sprintf(oneFieldSpec, "verdicts", cluster(t).T1.URL, index, fmt.Sprintf("  settings = jsondecode(%q)\n  mapping \"doc\" {\n    properties = { f = %s, all_text = \"string\" }\n  }\n", settings, hclValue(f)))
	dir := t.TempDir()
	cfg, diags := loadSpec(dir, spec)
	if diags.HasErrors() {
		return "validate: " + diags.Error()
	}
	bs, diags := New(cfg, Options{Env: noEnv})
	if diags.HasErrors() {
		return "validate: " + diags.Error()
	}
	if _, _, diags := readPlan(bs[0].(*Backend), plans.Converge); diags.HasErrors() {
		return "plan: " + diags.Error()
	}
	return ""
}

// reason is the first reason of an Elasticsearch error answer.
func reason(answer string) string {
	var e struct {
		Error struct {
			Type, Reason string
		}
	}
	if json.Unmarshal([]byte(answer), &e) != nil || e.Error.Reason == "" {
		return answer
	}
	return e.Error.Type + ": " + e.Error.Reason
}

// loadSpec loads the specs src (main.hcl) as validate does.
func loadSpec(dir, src string) (*schema.Config, hcl.Diagnostics) {
	if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(src), 0o644); err != nil {
		return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: err.Error()}}
	}
	return schema.NewParser(testLanguage).LoadDir(dir, schema.Inputs{})
}

// TestUncheckedSays: a plan that puts mappings on a 5.x or later server,
// whose mapping rules provision does not hold whole, says that the server
// judges their parameters; on 2.x, whose rules it holds, it says nothing.
func TestUncheckedSays(t *testing.T) {
	create := []*plans.Change{{Addr: addrs.Addr{Kind: Index, Name: "logs"}, Action: plans.Create}}
	for version, says := range map[string]bool{"2.4.1": false, "5.6.16": true, "7.17.10": true} {
		if note := unchecked(facts{Version: version}, create); (note != "") != says {
			t.Errorf("%s: %q", version, note)
		}
	}
	if note := unchecked(facts{Version: "5.6.16"}, []*plans.Change{{Addr: addrs.Addr{Kind: Index, Name: "logs"}, Action: plans.NoOp}}); note != "" {
		t.Errorf("a converged index: %q", note)
	}
}
