package search

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
)

// The mapping rules of Elasticsearch 2.x, as ES 2.4.1 judges a field
// mapping when an index is created with it: which parameters each type
// takes, the values they take, and the rules that join them. Each was
// read off a real ES 2.4.1 by TestMappingVerdicts (verdicts_test.go),
// which holds them to the server's verdict on every type crossed with
// every parameter of the 2.x mapping reference and its values; the quoted
// reasons are the server's own words.

// numericParams are what the numeric types, ip and token_count take.
var numericParams = []string{"boost", "coerce", "copy_to", "doc_values", "fielddata", "fields", "ignore_malformed", "include_in_all",
	"index", "index_options", "norms", "null_value", "precision_step", "similarity", "store"}

// params2 are the parameters each 2.x field type takes (besides type);
// a type it lacks is one ES 2.4.1 has no handler for.
var params2 = map[string][]string{
	"string": {"analyzer", "boost", "copy_to", "doc_values", "fielddata", "fields", "ignore_above", "include_in_all", "index", "index_options",
		"norms", "null_value", "position_increment_gap", "search_analyzer", "similarity", "store", "term_vector"},
	"long": numericParams, "integer": numericParams, "short": numericParams, "byte": numericParams, "double": numericParams,
	"float": numericParams, "ip": numericParams, "token_count": append([]string{"analyzer"}, numericParams...),
	"date":    append([]string{"format"}, numericParams...),
	"boolean": {"boost", "copy_to", "doc_values", "fielddata", "fields", "include_in_all", "index", "index_options", "norms", "null_value", "similarity", "store"},
	"binary":  {"boost", "copy_to", "doc_values", "fielddata", "include_in_all", "index", "index_options", "norms", "similarity", "store"},
	"object":  {"dynamic", "enabled", "include_in_all", "include_in_parent", "include_in_root", "properties"},
	"nested":  {"dynamic", "enabled", "include_in_all", "include_in_parent", "include_in_root", "properties"},
	"geo_point": {"boost", "copy_to", "doc_values", "fielddata", "fields", "geohash", "geohash_precision", "geohash_prefix", "ignore_malformed",
		"include_in_all", "index", "index_options", "lat_lon", "norms", "precision_step", "similarity", "store"},
	"geo_shape":  {"coerce", "distance_error_pct", "orientation", "points_only", "precision", "strategy", "tree", "tree_levels"},
	"completion": {"analyzer", "fields", "max_input_length", "payloads", "preserve_position_increments", "preserve_separators", "search_analyzer"},
}

// builtinAnalyzers2 are the analyzers an ES 2.4.1 node has without
// plugins or index settings (fingerprint is 5.x's; icu and kuromoji are
// plugins').
var builtinAnalyzers2 = []string{"arabic", "armenian", "basque", "brazilian", "bulgarian", "catalan", "chinese", "cjk", "classic", "czech",
	"danish", "default", "dutch", "english", "finnish", "french", "galician", "german", "greek", "hindi", "hungarian", "indonesian",
	"irish", "italian", "keyword", "latvian", "lithuanian", "norwegian", "pattern", "persian", "portuguese", "romanian", "russian",
	"simple", "snowball", "sorani", "spanish", "standard", "standard_html_strip", "stop", "swedish", "thai", "turkish", "whitespace"}

// dateFormats2 are the named date formats ES 2.4.1 takes (basic_t_time,
// which the reference lists, it does not: it reads it as a pattern).
var dateFormats2 = []string{"basic_date", "basic_date_time", "basic_date_time_no_millis", "basic_ordinal_date", "basic_ordinal_date_time",
	"basic_ordinal_date_time_no_millis", "basic_t_time_no_millis", "basic_time", "basic_time_no_millis", "basic_week_date", "basic_week_date_time",
	"basic_week_date_time_no_millis", "date", "date_hour", "date_hour_minute", "date_hour_minute_second", "date_hour_minute_second_fraction",
	"date_hour_minute_second_millis", "date_optional_time", "date_time", "date_time_no_millis", "epoch_millis", "epoch_second", "hour",
	"hour_minute", "hour_minute_second", "hour_minute_second_fraction", "hour_minute_second_millis", "ordinal_date", "ordinal_date_time",
	"ordinal_date_time_no_millis", "strict_basic_week_date", "strict_basic_week_date_time", "strict_basic_week_date_time_no_millis",
	"strict_date", "strict_date_hour", "strict_date_hour_minute", "strict_date_hour_minute_second", "strict_date_hour_minute_second_fraction",
	"strict_date_hour_minute_second_millis", "strict_date_optional_time", "strict_date_time", "strict_date_time_no_millis", "strict_hour",
	"strict_hour_minute", "strict_hour_minute_second", "strict_hour_minute_second_fraction", "strict_hour_minute_second_millis",
	"strict_ordinal_date", "strict_ordinal_date_time", "strict_ordinal_date_time_no_millis", "strict_t_time", "strict_t_time_no_millis",
	"strict_time", "strict_time_no_millis", "strict_week_date", "strict_week_date_time", "strict_week_date_time_no_millis",
	"strict_weekyear", "strict_weekyear_week", "strict_weekyear_week_day", "strict_year", "strict_year_month", "strict_year_month_day",
	"t_time", "t_time_no_millis", "time", "time_no_millis", "week_date", "week_date_time", "week_date_time_no_millis", "weekyear",
	"weekyear_week", "weekyear_week_day", "year", "year_month", "year_month_day"}

// jodaLetters are the pattern letters of a Joda-Time format, which ES 2.x
// date formats are; any other letter outside quotes is "Illegal pattern
// component".
const jodaLetters = "GCYxweEyDMdaKhHkmsSzZ"

// mappingRules2 reports what ES 2.x would refuse of the index's mappings,
// each at the field's line with the server's reason and what to write;
// analyzers are those of the declared and the live settings.
func mappingRules2(ix *IndexDecl, live liveIndex) hcl.Diagnostics {
	r := rules2{analyzers: analyzersOf(ix.Settings)}
	for k := range analyzersOf(liveFlat(live.Settings)) {
		r.analyzers[k] = true
	}
	for _, m := range ix.Mappings {
		for _, f := range m.Properties {
			r.field(f.Name, f.Params, f.Properties, f.Range)
		}
	}
	return r.diags
}

type rules2 struct {
	analyzers map[string]bool
	diags     hcl.Diagnostics
}

func (r *rules2) refuse(at hcl.Range, path, reason, instead string) {
	r.diags = append(r.diags, &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  "Mapping the server refuses",
		Detail:   fmt.Sprintf("Elasticsearch 2.x refuses the field %q: %s. %s Nothing is sent.", path, reason, instead),
		Subject:  at.Ptr(),
	})
}

// field checks one field mapping (params, and properties for an object
// declared with them) and, within it, its multi-fields and properties.
func (r *rules2) field(path string, params map[string]any, properties []*Field, at hcl.Range) {
	typ, _ := params["type"].(string)
	if typ == "" {
		typ = "object"
	}
	takes, known := params2[typ]
	switch {
	case !known && (typ == "text" || typ == "keyword"):
		return // 5.x's: versionLimits says what to write instead
	case !known:
		r.refuse(at, path, fmt.Sprintf("\"No handler for type [%s] declared on field [%s]\"", typ, path),
			"The 2.x field types are "+strings.Join(slices.Sorted(maps.Keys(params2)), ", ")+"; the others came later or with plugins.")
		return
	}
	var unsupported []string
	for _, p := range slices.Sorted(maps.Keys(params)) {
		if p != "type" && !slices.Contains(takes, p) {
			unsupported = append(unsupported, fmt.Sprintf("[%s : %v]", p, params[p]))
		}
	}
	if len(properties) > 0 && !slices.Contains(takes, "properties") {
		unsupported = append(unsupported, "[properties : ...]")
	}
	if len(unsupported) > 0 {
		r.refuse(at, path, fmt.Sprintf("\"Mapping definition for [%s] has unsupported parameters: %s\"", path, strings.Join(unsupported, " ")),
			fmt.Sprintf("The parameters of a %s field are %s.", typ, strings.Join(takes, ", ")))
	}
	index, hasIndex := params["index"]
	switch {
	case hasIndex && !slices.Contains([]any{"analyzed", "not_analyzed", "no"}, index):
		r.refuse(at, path, fmt.Sprintf("\"wrong value for index [%v]\"", index), `2.x's index is "analyzed", "not_analyzed" or "no" (true and false are 5.x's).`)
	case typ == "boolean" && index == "analyzed":
		r.refuse(at, path, `"bool field can't be tokenized"`, `Write index = "not_analyzed", or leave it out.`)
	case typ == "binary" && hasIndex && index != "no":
		r.refuse(at, path, fmt.Sprintf(`"mapper [%s] has different [index] values": a binary field is never indexed`, path), `Leave index out, or write "no".`)
	}
	if v, ok := params["index_options"]; ok && !slices.Contains([]any{"docs", "freqs", "positions", "offsets"}, v) {
		r.refuse(at, path, fmt.Sprintf("\"failed to parse index option [%v]\"", v), `index_options is "docs", "freqs", "positions" or "offsets".`)
	}
	if v, ok := params["term_vector"]; ok && !slices.Contains([]any{"no", "yes", "with_positions", "with_offsets", "with_positions_offsets"}, v) {
		r.refuse(at, path, fmt.Sprintf("\"wrong value for termVector [%v]\"", v), `term_vector is "no", "yes", "with_positions", "with_offsets" or "with_positions_offsets".`)
	}
	if v, ok := params["norms"]; ok {
		if _, isObject := v.(map[string]any); !isObject {
			r.refuse(at, path, "\"norms should be a hash\"", `2.x's norms is an object: norms = { enabled = false } (norms = false is 5.x's).`)
		}
	}
	for _, p := range []string{"boost", "ignore_above", "precision_step", "position_increment_gap"} {
		if v, ok := params[p]; ok && !numeric(v) {
			r.refuse(at, path, fmt.Sprintf("%s: \"For input string: \\\"%v\\\"\"", p, v), p+" is a number.")
		}
	}
	if v, ok := params["null_value"]; ok && numericType(typ) && !numeric(v) {
		r.refuse(at, path, fmt.Sprintf("null_value: \"For input string: \\\"%v\\\"\"", v), "The null_value of a "+typ+" field is a number.")
	}
	if typ == "string" && params["doc_values"] == true && (index == nil || index == "analyzed") {
		r.refuse(at, path, fmt.Sprintf("\"Field [%s] cannot be analyzed and have doc values\"", path), `Write index = "not_analyzed" beside doc_values, or leave doc_values out.`)
	}
	_, hasAnalyzer := params["analyzer"]
	if _, ok := params["search_analyzer"]; ok && !hasAnalyzer && (typ == "string" || typ == "completion") {
		r.refuse(at, path, fmt.Sprintf("\"analyzer on field [%s] must be set when search_analyzer is set\"", path), "Set analyzer too (search_analyzer only replaces it at search time).")
	}
	if typ == "token_count" && !hasAnalyzer {
		r.refuse(at, path, fmt.Sprintf("\"Analyzer must be set for field [%s] but wasn't.\"", path), `A token_count field counts the tokens of an analyzer: set analyzer, such as "standard".`)
	}
	for _, p := range []string{"analyzer", "search_analyzer"} {
		if name, ok := params[p].(string); ok && slices.Contains(params2[typ], p) && !r.analyzers[name] && !slices.Contains(builtinAnalyzers2, strings.ToLower(name)) {
			r.refuse(at, path, fmt.Sprintf("\"analyzer [%s] not found for field [%s]\"", name, path),
				"Name a built-in analyzer (standard, simple, whitespace, keyword, english, ...) or one the index's settings define (analysis.analyzer."+name+").")
		}
	}
	if f, ok := params["format"].(string); ok && typ == "date" {
		if err := dateFormat2(f); err != "" {
			r.refuse(at, path, err, "Write a named format (strict_date_optional_time, epoch_millis, ...) or a Joda pattern (yyyy-MM-dd), alternatives joined by ||.")
		}
	}
	if fields, ok := params["fields"].(map[string]any); ok && slices.Contains(takes, "fields") {
		for _, name := range slices.Sorted(maps.Keys(fields)) {
			sub, isObject := fields[name].(map[string]any)
			if !isObject {
				r.refuse(at, path+"."+name, fmt.Sprintf("\"illegal field [%s], only fields can be specified inside fields\"", name), fmt.Sprintf("Write it as a mapping: %s = { type = %q }.", name, fmt.Sprint(fields[name])))
				continue
			}
			if t, _ := sub["type"].(string); t != "" && params2[t] == nil {
				r.refuse(at, path+"."+name, fmt.Sprintf("\"no handler for type [%s] declared on field [%s]\"", t, name), "A multi-field of 2.x is one of its types: "+strings.Join(slices.Sorted(maps.Keys(params2)), ", ")+".")
				continue
			}
			r.field(path+"."+name, sub, nil, at)
		}
	}
	for _, p := range properties {
		r.field(path+"."+p.Name, p.Params, p.Properties, p.Range)
	}
}

// dateFormat2 is ES 2.4.1's reason to refuse a date format; "" when it
// takes it: each of its ||-joined parts a named format or a Joda pattern.
func dateFormat2(format string) string {
	for part := range strings.SplitSeq(format, "||") {
		if part == "" {
			return `"No date pattern provided"`
		}
		if slices.Contains(dateFormats2, part) {
			continue
		}
		if bad := illegalJoda(part); bad != "" {
			return fmt.Sprintf("\"Invalid format: [%s]: Illegal pattern component: %s\"", part, bad)
		}
	}
	return ""
}

var letterRun = regexp.MustCompile(`'[^']*'|[A-Za-z]+`)

// illegalJoda is the first run of a letter Joda-Time does not know in the
// pattern (outside quotes); "" when there is none.
func illegalJoda(pattern string) string {
	for _, run := range letterRun.FindAllString(pattern, -1) {
		if run[0] == '\'' {
			continue
		}
		for i, c := range run {
			if !strings.ContainsRune(jodaLetters, c) {
				// Joda reports the run of that one letter.
				end := i
				for end < len(run) && run[end] == run[i] {
					end++
				}
				return run[i:end]
			}
		}
	}
	return ""
}

// numeric says whether v is a number as Elasticsearch reads one: a JSON
// number or a string that parses as one.
func numeric(v any) bool {
	switch n := v.(type) {
	case float64, int, int64:
		return true
	case string:
		_, err := strconv.ParseFloat(n, 64)
		return err == nil
	}
	return false
}

func numericType(typ string) bool {
	return slices.Contains([]string{"long", "integer", "short", "byte", "double", "float", "token_count"}, typ)
}

// analysisKey is a setting that defines an analyzer.
var analysisKey = regexp.MustCompile(`^(?:index\.)?analysis\.analyzer\.([^.]+)\.`)

// analyzersOf are the analyzers flat settings define.
func analyzersOf(settings map[string]string) map[string]bool {
	out := map[string]bool{}
	for k := range settings {
		if m := analysisKey.FindStringSubmatch(k); m != nil {
			out[m[1]] = true
		}
	}
	return out
}

// liveFlat is live flat settings with their values as strings.
func liveFlat(settings map[string]any) map[string]string {
	out := make(map[string]string, len(settings))
	for k, v := range settings {
		out[k] = fmt.Sprint(v)
	}
	return out
}
