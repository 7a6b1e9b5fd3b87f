package main

import (
	"encoding/xml"
	"os"
	"path/filepath"
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
