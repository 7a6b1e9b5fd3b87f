package cli

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/provision-dev/provision/provision/cli/render"
	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/provision/provtest"
	"github.com/provision-dev/provision/provision/run"
)

// test runs the specs' golden-file tests: each run block of
// DIR/tests/*.provtest.hcl plans offline and is compared with its golden
// plans.
func (c *cli) test(args []string) int {
	var a testArgs
	pos, code, ok := c.args("test", &a, args, 1, nil)
	if !ok {
		return code
	}
	dir := dirArg(pos)
	v := c.textView(a.view.noColor)
	// The test file, the specs and their defaults alone make a run's plan:
	// an address or a credential of the environment (which Consul's client
	// reads itself), or a variable's value from it, would make the golden
	// files differ from one machine to another.
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); serverVar(k) {
			os.Unsetenv(k)
		}
	}
	o := provtest.Options{Language: c.Language, Update: a.update,
		Text: func(w io.Writer, p *plans.Plan) error { return render.Text(w, p, render.TextOptions{}) },
		Getenv: func(k string) string {
			if serverVar(k) {
				return ""
			}
			return c.getenv(k)
		},
		Environ: func() []string {
			return slices.DeleteFunc(c.environ(), func(kv string) bool { k, _, _ := strings.Cut(kv, "="); return serverVar(k) })
		},
		Policies: c.policyFolders(&a.run), PolicyKinds: c.PolicyKinds}
	if a.filter != "" {
		re, err := regexp.Compile(a.filter)
		if err != nil {
			v.Diagnostics(run.Refusal("Invalid -run", err.Error()+".", nil))
			return exitError
		}
		o.Filter = re
	}
	parser := hclparse.NewParser()
	runs, diags := provtest.Load(parser, dir)
	if diags.HasErrors() {
		v.files = parser.Files()
		v.Diagnostics(diags)
		return exitError
	}
	if len(runs) == 0 {
		v.Diagnostics(run.Refusal("No tests", fmt.Sprintf("%s/tests holds no *.provtest.hcl file with a run block.", dir), nil))
		return exitError
	}
	results, orphans, files := provtest.Execute(dir, runs, o)
	v.files = files
	for name, f := range parser.Files() {
		v.files[name] = f
	}
	failed := 0
	for _, r := range results {
		if !r.Passed() {
			failed++
		}
	}
	if a.view.json {
		c.testJSON(results, orphans, failed)
	} else {
		c.testText(v, results, orphans, failed)
	}
	if a.junit != "" {
		if err := writeJUnit(a.junit, results); err != nil {
			v.Diagnostics(run.Refusal("Cannot write the JUnit file", err.Error()+".", nil))
			return exitError
		}
	}
	if failed > 0 {
		return exitError
	}
	return exitOK
}

// serverVar reports whether an environment variable says where a server
// is or how to reach it, or gives a variable its value: provision test
// leaves them out (a run's variables are the test file's).
func serverVar(k string) bool {
	for _, p := range []string{"CONSUL_", "ELASTICSEARCH_", "TRAEFIK_API_", "PROVISION_VAR_"} {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	return false
}

func (c *cli) testText(v *textView, results []provtest.Result, orphans []string, failed int) {
	for _, r := range results {
		status := "pass"
		if !r.Passed() {
			status = "FAIL"
		}
		fmt.Fprintf(c.stdout, "%s: run %q ... %s (%.2fs)\n", r.Run.File, r.Run.Name, status, r.Elapsed.Seconds())
		for _, w := range r.Written {
			fmt.Fprintf(c.stdout, "  wrote %s\n", w)
		}
		for _, f := range r.Failures {
			fmt.Fprintf(c.stdout, "  %s\n", f)
		}
		if r.Diff != "" {
			fmt.Fprint(c.stdout, indent(r.Diff))
		}
		if !r.Passed() {
			v.Diagnostics(r.Diagnostics)
		}
	}
	for _, o := range orphans {
		fmt.Fprintf(c.stdout, "golden file %s: no run produces it (remove it, or restore its run)\n", o)
	}
	fmt.Fprintf(c.stdout, "\n%d passed, %d failed.\n", len(results)-failed, failed)
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n    ") + "\n"
}

// testJSON prints one object per run ("type": "run") and a summary.
func (c *cli) testJSON(results []provtest.Result, orphans []string, failed int) {
	enc := json.NewEncoder(c.stdout)
	for _, r := range results {
		_ = enc.Encode(struct {
			Type        string             `json:"type"`
			File        string             `json:"file"`
			Run         string             `json:"run"`
			Status      string             `json:"status"`
			Failures    []string           `json:"failures,omitempty"`
			Diff        string             `json:"diff,omitempty"`
			Written     []string           `json:"written,omitempty"`
			Seconds     float64            `json:"seconds"`
			Diagnostics []plans.Diagnostic `json:"diagnostics,omitempty"`
		}{"run", r.Run.File, r.Run.Name, map[bool]string{true: "pass", false: "fail"}[r.Passed()], r.Failures, r.Diff, r.Written, r.Elapsed.Seconds(),
			plans.JSONDiagnostics(c.hide(r.Diagnostics))})
	}
	_ = enc.Encode(struct {
		Type    string   `json:"type"`
		Passed  int      `json:"passed"`
		Failed  int      `json:"failed"`
		Orphans []string `json:"orphans,omitempty"`
	}{"summary", len(results) - failed, failed, orphans})
}

// writeJUnit writes the results as JUnit XML, one test suite per test
// file and one test case per run, as terraform test -junit-xml does.
func writeJUnit(path string, results []provtest.Result) error {
	type failure struct {
		Message string `xml:"message,attr"`
		Body    string `xml:",chardata"`
	}
	type testcase struct {
		Name      string   `xml:"name,attr"`
		Classname string   `xml:"classname,attr"`
		Time      string   `xml:"time,attr"`
		Failure   *failure `xml:"failure,omitempty"`
	}
	type suite struct {
		Name     string     `xml:"name,attr"`
		Tests    int        `xml:"tests,attr"`
		Failures int        `xml:"failures,attr"`
		Cases    []testcase `xml:"testcase"`
	}
	var suites []*suite
	byFile := map[string]*suite{}
	for _, r := range results {
		s := byFile[r.Run.File]
		if s == nil {
			s = &suite{Name: r.Run.File}
			byFile[r.Run.File] = s
			suites = append(suites, s)
		}
		tc := testcase{Name: r.Run.Name, Classname: r.Run.File, Time: fmt.Sprintf("%.3f", r.Elapsed.Seconds())}
		if !r.Passed() {
			s.Failures++
			tc.Failure = &failure{Message: strings.Join(r.Failures, "; "), Body: r.Diff}
		}
		s.Tests++
		s.Cases = append(s.Cases, tc)
	}
	out, err := xml.MarshalIndent(struct {
		XMLName xml.Name `xml:"testsuites"`
		Suites  []*suite `xml:"testsuite"`
	}{Suites: suites}, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append([]byte(xml.Header), append(out, '\n')...), 0o644)
}
