package cli

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestJUnit runs provision test over a copy of the shipped specs and
// their tests, with no server, and parses the JUnit XML it writes: one
// test suite per test file, one test case per run; a golden file edited
// by hand fails its run, with the difference in the failure's body; an
// assert block whose condition is false fails its run with its message,
// in the JUnit XML, the text and the JSON output.
func TestJUnit(t *testing.T) {
	dir := t.TempDir()
	copyTree(t, "../../specs", dir)
	for _, sub := range []string{"tests", "tests/snapshots", "tests/golden/plans"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
		files, _ := filepath.Glob(filepath.Join("../../specs", sub, "*"))
		for _, f := range files {
			if b, err := os.ReadFile(f); err == nil {
				os.WriteFile(filepath.Join(dir, sub, filepath.Base(f)), b, 0o644)
			}
		}
	}
	type report struct {
		Suites []struct {
			Name     string `xml:"name,attr"`
			Tests    int    `xml:"tests,attr"`
			Failures int    `xml:"failures,attr"`
			Cases    []struct {
				Name    string `xml:"name,attr"`
				Failure *struct {
					Message string `xml:"message,attr"`
					Body    string `xml:",chardata"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	junit := func() (int, report) {
		path := filepath.Join(t.TempDir(), "junit.xml")
		code, out, errOut := runCLI(t, map[string]string{"NO_COLOR": "1"}, "test", "-junit-xml", path, dir)
		var r report
		b, err := os.ReadFile(path)
		if err != nil || xml.Unmarshal(b, &r) != nil || len(r.Suites) != 1 {
			t.Fatalf("exit %d, %v:\n%s\n%s%s", code, err, b, out, errOut)
		}
		return code, r
	}
	code, r := junit()
	if s := r.Suites[0]; code != exitOK || s.Tests != 6 || s.Failures != 0 || !strings.HasSuffix(s.Name, "plans.provtest.hcl") || s.Cases[3].Name != "drifted" {
		t.Errorf("exit %d, %+v", code, r)
	}
	golden := filepath.Join(dir, "tests", "golden", "plans", "drifted.txt")
	b, _ := os.ReadFile(golden)
	os.WriteFile(golden, []byte(strings.Replace(string(b), "8081", "8099", 1)), 0o644)
	code, r = junit()
	s := r.Suites[0]
	if code != exitError || s.Failures != 1 || s.Cases[3].Failure == nil || !strings.Contains(s.Cases[3].Failure.Message, "the plan differs from") ||
		!strings.Contains(s.Cases[3].Failure.Body, "-") || !strings.Contains(s.Cases[3].Failure.Body, "+") {
		t.Errorf("exit %d, %+v", code, r)
	}
	os.WriteFile(golden, b, 0o644)

	tests := filepath.Join(dir, "tests", "plans.provtest.hcl")
	src, _ := os.ReadFile(tests)
	failing := strings.Replace(string(src), `length(regexall("[.]service[.]", c.address)) > 0]) == 2`, `length(regexall("[.]service[.]", c.address)) > 0]) == 3`, 1)
	if failing == string(src) {
		t.Fatal("the shipped greenfield run has no assert to break")
	}
	os.WriteFile(tests, []byte(failing), 0o644)
	code, r = junit()
	s = r.Suites[0]
	const msg = "assertion failed: Each team's gated API is registered. (the assert at "
	if code != exitError || s.Failures != 1 || s.Cases[0].Failure == nil || !strings.Contains(s.Cases[0].Failure.Body+s.Cases[0].Failure.Message, msg) {
		t.Errorf("a false assertion, JUnit: exit %d, %+v", code, r)
	}
	code, out, _ := runCLI(t, map[string]string{"NO_COLOR": "1"}, "test", dir)
	if code != exitError || !strings.Contains(out, `run "greenfield" ... FAIL`) || !strings.Contains(out, msg) || strings.Contains(out, "A first apply deletes nothing") {
		t.Errorf("a false assertion, text: exit %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, map[string]string{"NO_COLOR": "1"}, "test", "-json", dir)
	if code != exitError || !strings.Contains(out, `assertion failed: Each team's gated API is registered.`) {
		t.Errorf("a false assertion, JSON: exit %d\n%s", code, out)
	}
}

// TestGatedRule: the shipped rule that every service a proxy routes to is
// gated (specs/tests, the golden-file tests guide) fails a run whose
// specs declare a frontend without a forward auth, naming the rule.
func TestGatedRule(t *testing.T) {
	src, err := os.ReadFile("../../specs/tests/plans.provtest.hcl")
	if err != nil {
		t.Fatal(err)
	}
	rule := regexp.MustCompile(`(?s)  assert \{\n    condition = length\(\[\n.*?Every service a proxy routes to is gated by a forward auth."\n  \}\n`).FindString(string(src))
	if rule == "" {
		t.Fatal("the shipped greenfield run has no rule that every frontend is gated")
	}
	dir := t.TempDir()
	for name, text := range map[string]string{
		"main.hcl": "project = \"rule\"\n\nservice \"gated\" {\n  port = 8080\n  frontend {\n    rule = \"PathPrefix:/gated\"\n    forward_auth {\n      address = \"http://127.0.0.1:8080/auth\"\n    }\n  }\n}\n\n" +
			"service \"open\" {\n  port = 8081\n  frontend {\n    rule = \"PathPrefix:/open\"\n  }\n}\n",
		"tests/rule.provtest.hcl": "run \"gated\" {\n" + rule + "}\n",
	} {
		os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Its golden plan first, of gated frontends alone; then the open one.
	main, _ := os.ReadFile(filepath.Join(dir, "main.hcl"))
	gated, _, _ := strings.Cut(string(main), "\nservice \"open\"")
	os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(gated), 0o644)
	if code, out, errOut := runCLI(t, map[string]string{"NO_COLOR": "1"}, "test", "-update", dir); code != exitOK {
		t.Fatalf("only gated frontends: exit %d\n%s%s", code, out, errOut)
	}
	os.WriteFile(filepath.Join(dir, "main.hcl"), main, 0o644)
	code, out, errOut := runCLI(t, map[string]string{"NO_COLOR": "1"}, "test", dir)
	if code != exitError || !strings.Contains(out+errOut, "Every service a proxy routes to is gated by a forward auth.") {
		t.Errorf("a frontend without a forward auth: exit %d\n%s%s", code, out, errOut)
	}
}

// TestRunsJudgedAlone: a run whose variables the specs refuse fails, with
// the refusal, whichever run loaded the same variables first (the shipped
// "bad port" expects that failure), in a file before or after the others,
// with -run or without; -update writes no golden file for it and still
// fails.
func TestRunsJudgedAlone(t *testing.T) {
	for _, file := range []string{"a.provtest.hcl", "z.provtest.hcl"} {
		for _, args := range [][]string{{"test"}, {"test", "-run", "zero"}, {"test", "-update"}, {"test", "-update", "-run", "port|zero"}} {
			t.Run(file+" "+strings.Join(args, " "), func(t *testing.T) {
				dir := t.TempDir()
				copyTree(t, "../../specs", dir)
				if err := os.CopyFS(filepath.Join(dir, "tests"), os.DirFS("../../specs/tests")); err != nil {
					t.Fatal(err)
				}
				zero := filepath.Join(dir, "tests", file)
				if err := os.WriteFile(zero, []byte("run \"zero\" {\n  variables = { api_port = 0 }\n}\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				code, out, errOut := runCLI(t, map[string]string{"NO_COLOR": "1"}, append(args, dir)...)
				if code != exitError || !strings.Contains(out, `run "zero" ... FAIL`) || !strings.Contains(out, "Invalid value for variable") {
					t.Errorf("exit %d\n%s%s", code, out, errOut)
				}
				if strings.Contains(out, `"bad port" ... FAIL`) {
					t.Errorf("the shipped bad port run failed beside it:\n%s", out)
				}
				golden, _ := filepath.Glob(filepath.Join(dir, "tests", "golden", strings.TrimSuffix(file, ".provtest.hcl"), "*"))
				if len(golden) > 0 {
					t.Errorf("golden files written for a failing run: %v", golden)
				}
			})
		}
	}
}

// TestRunsIgnoreEnvironment: the shipped runs pass with every variable
// of provision's environment set to another value (a variable's value, a
// server's address or credential): a run is planned from the test file,
// the specs and their defaults alone.
func TestRunsIgnoreEnvironment(t *testing.T) {
	env := map[string]string{"NO_COLOR": "1", "PROVISION_VAR_api_port": "9999", "PROVISION_VAR_api_host": "10.9.9.9",
		"PROVISION_VAR_search_url": "http://10.9.9.9:9200", "CONSUL_HTTP_ADDR": "10.9.9.9:8500", "CONSUL_HTTP_TOKEN": "other-token",
		"ELASTICSEARCH_URL": "http://10.9.9.9:9200", "ELASTICSEARCH_PASSWORD": "other"}
	var pairs []string
	for k, v := range env {
		pairs = append(pairs, k+"="+v)
	}
	var stdout, stderr strings.Builder
	c := testCLI(strings.NewReader(""), &stdout, &stderr)
	c.getenv = func(k string) string { return env[k] }
	c.environ = func() []string { return pairs }
	if code := c.run([]string{"test", "../../specs"}); code != exitOK || !strings.Contains(stdout.String(), "6 passed, 0 failed.") {
		t.Errorf("provision test with another environment: exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
}
