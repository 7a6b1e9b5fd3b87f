package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/provision/provtest"
	"github.com/provision-dev/provision/provision/servers"
)

// docFiles are the documents users read: the README, CONTRIBUTING.md and
// the docs tree.
func docFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"../../README.md", "../../CONTRIBUTING.md"}
	err := filepath.WalkDir("../../docs", func(path string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(path, ".md") {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// fence is one fenced code block of a document.
type fence struct {
	file string
	line int // of its first line of code
	lang string
	code string
}

func fences(t *testing.T, file string) []fence {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out []fence
	var cur *fence
	for i, l := range strings.Split(string(b), "\n") {
		switch {
		case cur == nil && strings.HasPrefix(l, "```"):
			cur = &fence{file: file, line: i + 2, lang: strings.TrimPrefix(l, "```")}
		case cur != nil && strings.HasPrefix(l, "```"):
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.code += l + "\n"
		}
	}
	return out
}

// section is the text of a page's "## name" section.
func section(page, name string) string {
	_, after, ok := strings.Cut(page, "\n## "+name+"\n")
	if !ok {
		return ""
	}
	if i := strings.Index(after, "\n## "); i >= 0 {
		after = after[:i]
	}
	return after
}

// TestCommandPages holds docs/commands to the CLI: a page for every
// command, in man-page shape, repeating the synopsis and paragraph of its
// -help and naming exactly the flags its -help lists.
func TestCommandPages(t *testing.T) {
	pages, _ := filepath.Glob("../../docs/commands/*.md")
	var documented []string
	for _, p := range pages {
		documented = append(documented, strings.TrimSuffix(filepath.Base(p), ".md"))
	}
	var names []string
	c := testCLI(nil, io.Discard, io.Discard)
	for _, cmd := range commands {
		names = append(names, cmd.name)
		t.Run(cmd.name, func(t *testing.T) {
			b, err := os.ReadFile("../../docs/commands/" + cmd.name + ".md")
			if err != nil {
				t.Fatalf("no page for provision %s: %v", cmd.name, err)
			}
			page := string(b)
			for _, s := range []string{"Synopsis", "Options", "Exit status", "Environment", "Examples"} {
				if section(page, s) == "" {
					t.Errorf("docs/commands/%s.md has no %q section", cmd.name, s)
				}
			}
			if !strings.Contains(section(page, "Synopsis"), "provision "+cmd.synopsis+"\n") {
				t.Errorf("docs/commands/%s.md: the synopsis is not the -help's %q", cmd.name, "provision "+cmd.synopsis)
			}
			if !strings.Contains(strings.Join(strings.Fields(page), " "), cmd.about) {
				t.Errorf("docs/commands/%s.md does not repeat the paragraph of its -help:\n%s", cmd.name, cmd.about)
			}
			var listed []string
			for _, m := range regexp.MustCompile("(?m)^- `(-[a-z-]+)").FindAllStringSubmatch(section(page, "Options"), -1) {
				listed = append(listed, m[1])
			}
			help := c.flagsOf(cmd.name)
			for _, f := range help {
				if !slices.Contains(listed, f) {
					t.Errorf("docs/commands/%s.md: %s (in provision %s -help) has no entry under Options", cmd.name, f, cmd.name)
				}
			}
			for _, f := range listed {
				if !slices.Contains(help, f) {
					t.Errorf("docs/commands/%s.md names %s, which provision %s does not have", cmd.name, f, cmd.name)
				}
			}
		})
	}
	for _, d := range documented {
		if !slices.Contains(names, d) {
			t.Errorf("docs/commands/%s.md documents no command of provision -help", d)
		}
	}
}

// TestEveryKindDocumented: every kind of the CLI's language has its language page
// and its address in the plan format's reference, so that a new kind
// cannot land without them.
func TestEveryKindDocumented(t *testing.T) {
	format, err := os.ReadFile("../../docs/reference/plan-format.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(testOptions.Language.Kinds().All()) < 4 {
		t.Fatalf("%d kinds in the language: the CLI names every kind", len(testOptions.Language.Kinds().All()))
	}
	for _, k := range testOptions.Language.Kinds().All() {
		if _, err := os.Stat("../../docs/language/" + k.Name() + ".md"); err != nil {
			t.Errorf("kind %s has no page docs/language/%s.md", k, k)
		}
		if !strings.Contains(string(format), "`"+k.Name()+".") && !strings.Contains(string(format), "`"+k.Name()+"[") {
			t.Errorf("kind %s: docs/reference/plan-format.md does not list its address (%s)", k, k.Form())
		}
	}
}

// TestDocsFormatVersion: every format_version of a plan the docs name is
// the one provision writes.
func TestDocsFormatVersion(t *testing.T) {
	mention := regexp.MustCompile("format_version(?:` `|\": | )\"?([0-9]+\\.[0-9]+)")
	for _, page := range []string{"../../docs/reference/plan-format.md", "../../docs/commands/plan.md"} {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		found := mention.FindAllStringSubmatch(string(b), -1)
		if len(found) == 0 {
			t.Errorf("%s names no format_version", page)
		}
		for _, m := range found {
			if m[1] != plans.FormatVersion {
				t.Errorf("%s: %q names format %s; provision writes %s", page, m[0], m[1], plans.FormatVersion)
			}
		}
	}
}

var expectLine = regexp.MustCompile(`(?m)^# expect: (.+)$`)

// TestDocsHCL validates every hcl example of the docs, as validate does.
// By its first line an example is a whole spec file (the default); a file
// of specs/ ("# specs/NAME.hcl": validated in a copy of specs/, in that
// file's place); one that reads files of the repository ("# files:
// testdata/DIR-OR-FILE", copied beside it by its base name); a provtest
// file ("# specs/tests/NAME.provtest.hcl"); a policy file ("#
// policies/NAME.policy.hcl", validated with -policies); or
// Consul ACL rules ("# Consul ACL rules", parsed as HCL only). An example
// meant to fail says so with "# expect: <summary>", as the bad-input
// corpus does.
func TestDocsHCL(t *testing.T) {
	n := 0
	for _, file := range docFiles(t) {
		for _, f := range fences(t, file) {
			if f.lang != "hcl" {
				continue
			}
			n++
			where := strings.TrimPrefix(f.file, "../../") + ":" + strconv.Itoa(f.line)
			first, _, _ := strings.Cut(f.code, "\n")
			if first == "# Consul ACL rules" {
				if _, diags := hclsyntax.ParseConfig([]byte(f.code), where, hcl.InitialPos); diags.HasErrors() {
					t.Errorf("%s: %s", where, diags)
				}
				continue
			}
			dir := t.TempDir()
			name := "main.hcl"
			if p, ok := strings.CutPrefix(first, "# files: "); ok {
				copyFiles(t, filepath.Join("../..", p), filepath.Join(dir, filepath.Base(p)))
			}
			var validate []string
			if p, ok := strings.CutPrefix(first, "# policies/"); ok { // a policy file, validated beside specs of one project
				if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte("project = \"docs\"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				name, validate = "policies/"+p, []string{"-policies", filepath.Join(dir, "policies")}
			}
			if p, ok := strings.CutPrefix(first, "# specs/"); ok {
				if err := os.CopyFS(dir, os.DirFS("../../specs")); err != nil {
					t.Fatal(err)
				}
				name = p
			}
			path := filepath.Join(dir, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(f.code), 0o644); err != nil {
				t.Fatal(err)
			}
			var summaries []string
			if strings.HasSuffix(name, ".provtest.hcl") {
				_, diags := provtest.Load(hclparse.NewParser(), dir)
				for _, d := range diags {
					summaries = append(summaries, d.Summary+": "+d.Detail)
				}
			} else {
				var out bytes.Buffer
				testCLI(nil, &out, io.Discard).run(append(append([]string{"validate", "-json"}, validate...), dir))
				var v struct {
					Diagnostics []struct{ Severity, Summary, Detail string }
				}
				if err := json.Unmarshal(out.Bytes(), &v); err != nil {
					t.Fatalf("%s: validate -json: %v\n%s", where, err, out.String())
				}
				for _, d := range v.Diagnostics {
					if d.Severity == "error" {
						summaries = append(summaries, d.Summary+": "+d.Detail)
					}
				}
			}
			if m := expectLine.FindStringSubmatch(f.code); m != nil {
				if !slices.ContainsFunc(summaries, func(s string) bool { return strings.HasPrefix(s, m[1]) }) {
					t.Errorf("%s: the example expects the error %q; validate said %q", where, m[1], summaries)
				}
			} else if len(summaries) > 0 {
				t.Errorf("%s: the example does not validate:\n  %s", where, strings.Join(summaries, "\n  "))
			}
		}
	}
	if n < 10 {
		t.Errorf("only %d hcl examples found in the docs", n)
	}
}

// TestDocsCommandLines checks every "provision <command> ..." the docs
// show, in code blocks and in inline code: the command exists, and so
// does every flag it is given.
func TestDocsCommandLines(t *testing.T) {
	c := testCLI(nil, io.Discard, io.Discard)
	flags := map[string][]string{}
	for _, cmd := range commands {
		flags[cmd.name] = c.flagsOf(cmd.name)
	}
	call := regexp.MustCompile(`(?:^\s*(?:\$ )?|[;&|(]\s*|` + "`" + `)provision ([a-z][a-z-]*)([^|;&#)` + "`" + `\n]*)`)
	inline := regexp.MustCompile("`provision [^`]+`")
	n := 0
	for _, file := range docFiles(t) {
		var lines []string
		for _, f := range fences(t, file) {
			if f.lang != "hcl" {
				lines = append(lines, strings.Split(f.code, "\n")...)
			}
		}
		b, _ := os.ReadFile(file)
		lines = append(lines, inline.FindAllString(string(b), -1)...)
		for _, l := range lines {
			for _, m := range call.FindAllStringSubmatch(l, -1) {
				cmd, args := m[1], m[2]
				fl, ok := flags[cmd]
				if !ok {
					t.Errorf("%s: %q: provision has no command %q", strings.TrimPrefix(file, "../../"), strings.TrimSpace(m[0]), cmd)
					continue
				}
				n++
				for _, a := range strings.Fields(args) {
					if !strings.HasPrefix(a, "-") || a == "-" {
						continue
					}
					name, _, _ := strings.Cut(strings.TrimPrefix(a, "-"), "=")
					if !slices.Contains(fl, "-"+strings.TrimPrefix(name, "-")) {
						t.Errorf("%s: %q: provision %s has no flag -%s", strings.TrimPrefix(file, "../../"), strings.TrimSpace(m[0]), cmd, strings.TrimPrefix(name, "-"))
					}
				}
			}
		}
	}
	if n < 30 {
		t.Errorf("only %d provision command lines found in the docs", n)
	}
}

// TestCompletion sources the bash script and completes as bash would: a
// command, a flag, and the addresses after -target, read from the specs.
func TestCompletion(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	bin := t.TempDir()
	if out, err := exec.Command("go", "build", "-o", filepath.Join(bin, "provision"), "../../cmd/provision").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	complete := func(words ...string) []string {
		script := `source <(provision completion bash) && COMP_WORDS=(` + strings.Join(quoteAll(words), " ") + `) && COMP_CWORD=$((${#COMP_WORDS[@]}-1)) && _provision && printf '%s\n' "${COMPREPLY[@]}"`
		cmd := exec.Command("bash", "-c", script)
		cmd.Dir = "../.."
		cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("bash: %v\n%s", err, out)
		}
		return strings.Fields(string(out))
	}
	check := exec.Command("bash", "-n")
	check.Stdin = strings.NewReader(func() string {
		var out bytes.Buffer
		testCLI(nil, &out, io.Discard).run([]string{"completion", "bash"})
		return out.String()
	}())
	if out, err := check.CombinedOutput(); err != nil {
		t.Errorf("bash -n of the script: %v\n%s", err, out)
	}
	if got := complete("provision", "pl"); !slices.Equal(got, []string{"plan"}) {
		t.Errorf("provision pl<TAB>: %q, want plan", got)
	}
	if got := complete("provision", "plan", "-deta"); !slices.Equal(got, []string{"-detailed-exitcode"}) {
		t.Errorf("provision plan -deta<TAB>: %q", got)
	}
	got := complete("provision", "plan", "specs", "-target", "")
	want := []string{`module.gated_api\[\"edge\"\].service.gated-api-1`, `index\[\".dashboard\"\]`}
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("provision plan specs -target <TAB>: %q, want %s among them", got, w)
		}
	}
	if got := complete("provision", "plan", "-target", "inde"); !slices.Equal(got, []string{`index\[\".dashboard\"\]`}) {
		t.Errorf("provision plan -target inde<TAB>: %q", got)
	}
	for _, shell := range []string{"zsh", "fish"} {
		var out bytes.Buffer
		if code := testCLI(nil, &out, io.Discard).run([]string{"completion", shell}); code != 0 || !strings.Contains(out.String(), "complete") || !strings.Contains(out.String(), "-detailed-exitcode") && !strings.Contains(out.String(), "detailed-exitcode") {
			t.Errorf("provision completion %s: exit %d\n%s", shell, code, out.String())
		}
	}
}

func quoteAll(ss []string) []string {
	var out []string
	for _, s := range ss {
		out = append(out, "'"+strings.ReplaceAll(s, "'", `'\''`)+"'")
	}
	return out
}

// copyFiles copies the file or directory from to the path to.
func copyFiles(t *testing.T, from, to string) {
	t.Helper()
	info, err := os.Stat(from)
	if err != nil {
		t.Fatal(err)
	}
	if info.IsDir() {
		err = os.CopyFS(to, os.DirFS(from))
	} else if b, rerr := os.ReadFile(from); rerr != nil {
		err = rerr
	} else {
		err = os.WriteFile(to, b, 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// TestPolicyExample: the policy the production guide shows for the
// shipped specs is what provision policy -node node-1 prints for them,
// against a real agent, its two header lines left out.
func TestPolicyExample(t *testing.T) {
	agent := servers.NewConsul(t)
	guide, err := os.ReadFile("../../docs/guides/production-consul.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(guide), "its two header lines left out):\n\n```hcl\n# Consul ACL rules\n")
	shown, _, _ := strings.Cut(rest, "```\n")
	if !ok || shown == "" {
		t.Fatal("the production guide shows no policy of the shipped specs")
	}
	code, out, errOut := runCLI(t, map[string]string{"CONSUL_HTTP_ADDR": agent.Addr}, "policy", "-node", "node-1", "../../specs")
	lines := strings.SplitN(out, "\n", 4)
	if code != exitOK || len(lines) < 4 || lines[3] != shown {
		t.Errorf("policy: exit %d%s\nthe guide shows:\n%s\nthe command prints:\n%s", code, errOut, shown, out)
	}
}

// TestDocsRunOffline runs every provision command line of the docs' shell
// examples that needs no server (validate, fmt -check and -diff, test,
// version, completion, and plan, list, graph and output from -greenfield
// or a snapshot), in a copy of the repository's specs and test data, as a
// reader would from the repository's top: each must exit 0, or 2 where
// -detailed-exitcode reports changes. A line that uses the shell (a
// variable, a pipe, a redirection) or a server is left to the tests of
// its guide. A page whose example breaks fails naming the page and line.
func TestDocsRunOffline(t *testing.T) {
	work := t.TempDir()
	for _, d := range []string{"specs", "testdata"} {
		if err := os.CopyFS(filepath.Join(work, d), os.DirFS(filepath.Join("../..", d))); err != nil {
			t.Fatal(err)
		}
	}
	var lines []struct {
		where string
		args  []string
	}
	for _, file := range docFiles(t) {
		for _, f := range fences(t, file) {
			if f.lang != "sh" && f.lang != "bash" && f.lang != "" {
				continue
			}
			for i, l := range strings.Split(f.code, "\n") {
				l = strings.TrimPrefix(strings.TrimSpace(l), "$ ")
				if c, _, ok := strings.Cut(l, " # "); ok {
					l = strings.TrimSpace(c)
				}
				if !strings.HasPrefix(l, "provision ") || strings.ContainsAny(l, "$|<>;&`*\\\"'[") {
					continue
				}
				args := strings.Fields(l)[1:]
				if !offline(args) {
					continue
				}
				lines = append(lines, struct {
					where string
					args  []string
				}{fmt.Sprintf("%s:%d", strings.TrimPrefix(file, "../../"), f.line+i), args})
			}
		}
	}
	wd, _ := os.Getwd()
	t.Cleanup(func() { os.Chdir(wd) })
	if err := os.Chdir(work); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"NO_COLOR": "1", "CONSUL_HTTP_ADDR": "127.0.0.1:1", "ELASTICSEARCH_URL": "http://127.0.0.1:1"}
	for _, l := range lines {
		// A snapshot an earlier line took from a server is stood in for by
		// the shipped specs' converged one.
		if i := slices.Index(l.args, "-snapshot"); i >= 0 && i+1 < len(l.args) {
			if _, err := os.Stat(l.args[i+1]); err != nil {
				os.MkdirAll(filepath.Dir(l.args[i+1]), 0o755)
				copyFiles(t, "specs/tests/snapshots/converged.json", l.args[i+1])
			}
		}
		code, out, errOut := runCLI(t, env, l.args...)
		t.Logf("%s: provision %s: exit %d", l.where, strings.Join(l.args, " "), code)
		if code != exitOK && !(code == exitChanges && slices.Contains(l.args, "-detailed-exitcode")) {
			t.Errorf("%s: provision %s: exit %d\n%s%s", l.where, strings.Join(l.args, " "), code, out, errOut)
		}
	}
	if len(lines) < 10 {
		t.Errorf("only %d offline command lines found in the docs", len(lines))
	}
	t.Logf("%d offline command lines of the docs run", len(lines))
}

// offline reports whether provision args read no server and write
// nothing outside the copy: what TestDocsRunOffline runs.
func offline(args []string) bool {
	if len(args) == 0 {
		return false
	}
	has := func(f string) bool {
		return slices.ContainsFunc(args, func(a string) bool { return a == f || strings.HasPrefix(a, f+"=") })
	}
	switch args[0] {
	case "validate", "test", "version", "completion":
		return !has("-update")
	case "fmt":
		return has("-check") || has("-diff")
	case "plan", "list", "graph", "output":
		return (has("-greenfield") || has("-snapshot")) && !has("-out") && !has("-generate-config-out")
	}
	return false
}
