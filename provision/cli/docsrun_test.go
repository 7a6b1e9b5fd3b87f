package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/provision-dev/provision/provision/servers"
)

// notRun marks a line of a page's shell example that the tests show but
// do not run, with why, in its comment: "# ...; not run here: why".
var notRun = regexp.MustCompile(`#.*\bnot run here:\s*\S`)

// failedLine is what the script's ERR trap says of the line that failed.
var failedLine = regexp.MustCompile(`docs-run: line (\d+) failed`)

// prints is a line's claim of what it prints, in its comment: `#
// prints "No changes."`, checked when the line runs.
var prints = regexp.MustCompile(`^(.*?)\s*#\s*prints "([^"]+)"\s*$`)

// TestDocsRun runs the shell examples of README.md, of every command
// page and of every guide as a reader would, from the top of a checkout:
// each page's sh and bash fences, in order, as one bash script (so that
// an export or a cd carries to the next fence), with errexit and
// pipefail, in a copy of the repository's tracked files made a git
// checkout of its own, against a real Consul agent and a real
// Elasticsearch cluster t1, where the README leaves a reader (bin/ built
// and on PATH, the shipped specs applied). The servers' addresses stand
// in for the pages' (127.0.0.1:8500 and 127.0.0.1:9200), consul is on
// PATH, HOME is the test's, and every confirmation is answered "yes". A
// -detailed-exitcode line may exit 2 (changes). A line whose comment
// says "not run here: why" is not run; one whose comment says `prints
// "text"` must print it. A line that fails fails the page, naming the
// page and line.
func TestDocsRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Consul and Elasticsearch")
	}
	commands, _ := filepath.Glob("../../docs/commands/*.md")
	guides, _ := filepath.Glob("../../docs/guides/*.md")
	pages := append(append([]string{"../../README.md"}, commands...), guides...)
	agent := servers.NewConsul(t)
	search := servers.NewCluster(t, "t1")
	bin := t.TempDir()
	// bin/ of each copy holds what make build makes, as the README leaves
	// it, and PATH has it.
	for _, cmd := range []string{"provision", "gated-api"} {
		if out, err := exec.Command("go", "build", "-o", filepath.Join(bin, cmd), "../../cmd/"+cmd).CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
	}
	consul, err := servers.ConsulBinary()
	if err != nil {
		t.Fatal(err)
	}
	tools := t.TempDir()
	if err := os.Symlink(consul, filepath.Join(tools, "consul")); err != nil {
		t.Fatal(err)
	}
	tracked, err := exec.Command("git", "-C", "../..", "ls-files").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	env := []string{"PATH=" + strings.Join([]string{bin, tools, os.Getenv("PATH")}, string(os.PathListSeparator)), "HOME=" + t.TempDir(), "NO_COLOR=1",
		"GOCACHE=" + goEnv(t, "GOCACHE"), "GOMODCACHE=" + goEnv(t, "GOMODCACHE"), "GOTOOLCHAIN=local",
		"GIT_AUTHOR_NAME=docs", "GIT_AUTHOR_EMAIL=docs@localhost", "GIT_COMMITTER_NAME=docs", "GIT_COMMITTER_EMAIL=docs@localhost"}
	ran := map[string]int{}
	for _, page := range pages {
		name := strings.TrimPrefix(page, "../../")
		script, lines, marked := pageScript(t, page)
		if len(lines) == 0 {
			continue
		}
		t.Run(filepath.Base(page), func(t *testing.T) {
			work := checkout(t, strings.Fields(string(tracked)))
			copyFiles(t, bin, filepath.Join(work, "bin"))
			script = strings.NewReplacer("127.0.0.1:8500", agent.Addr, "http://127.0.0.1:9200", search.URL).Replace(script)
			// Each page starts where the README leaves a reader: the
			// shipped specs applied.
			reset := "provision apply -auto-approve -no-color specs/ >/dev/null\n"
			// A page's bound is a hang's, not a speed: it allows for a
			// cold build cache on two busy cores. The DEBUG trap writes
			// the line about to run, so that a page killed at its bound
			// says which line it was in.
			ctx, cancel := context.WithTimeout(context.Background(), pageBound)
			defer cancel()
			step := filepath.Join(t.TempDir(), "line")
			cmd := exec.CommandContext(ctx, "bash", "-c", "set -eE -o pipefail; trap 'echo \"docs-run: line $LINENO failed\" >&2' ERR; trap 'echo $LINENO >\"$DOCS_RUN_LINE\"' DEBUG; "+reset+script)
			cmd.Dir, cmd.Env = work, append(env, "CONSUL_HTTP_ADDR="+agent.Addr, "ELASTICSEARCH_URL="+search.URL, "DOCS_RUN_LINE="+step)
			cmd.Stdin = strings.NewReader(strings.Repeat("yes\n", 100))
			// A command the page leaves running is stopped with the page.
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
			cmd.WaitDelay = 10 * time.Second
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			err := cmd.Run()
			if ctx.Err() != nil {
				b, _ := os.ReadFile(step)
				t.Fatalf("%s: the example was killed at its bound of %v, in this line:\n%s", scriptLine(lines, strings.TrimSpace(string(b))), pageBound, tail(out.String(), 4000))
			}
			if err != nil {
				at := "?"
				if m := failedLine.FindStringSubmatch(out.String()); m != nil {
					at = scriptLine(lines, m[1])
				}
				t.Fatalf("%s: the example fails (%v):\n%s", at, err, tail(out.String(), 4000))
			}
			ran[name] = len(lines) - marked
		})
	}
	t.Logf("lines run per page: %v", ran)
}

// pageBound is how long a page's example may run: a hang's bound. The
// heaviest page builds both binaries and runs a few plans; the release's
// cross-builds, the one step that once took minutes, are TestRelease's
// alone (the install guide marks them not run here).
const pageBound = 15 * time.Minute

// scriptLine is where on its page the script's line n (bash's $LINENO,
// as text) is: the first line of the script is the reset, the second the
// page's first line.
func scriptLine(lines []string, n string) string {
	var i int
	if _, err := fmt.Sscan(n, &i); err != nil || i-2 < 0 || i-2 >= len(lines) {
		if i == 1 {
			return "the reset (provision apply specs/)"
		}
		return "?"
	}
	return lines[i-2]
}

// pageScript is the shell of page's sh and bash fences, in order, one
// line for each line of the fences (a marked line as a no-op), where on
// the page each line is (file:line), and how many are marked.
func pageScript(t *testing.T, page string) (script string, at []string, marked int) {
	text, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, f := range fences(t, page) {
		if f.lang != "sh" && f.lang != "bash" || inSynopsis(string(text), f.line) {
			continue
		}
		code := strings.Split(strings.TrimSuffix(f.code, "\n"), "\n")
		for i, l := range code {
			if notRun.MatchString(l) {
				l = ":"
				marked++
			}
			if strings.Contains(l, "-detailed-exitcode") && !strings.HasSuffix(strings.TrimSpace(l), "\\") {
				l += " || [ $? = 2 ]"
			}
			if m := prints.FindStringSubmatch(l); m != nil {
				l = fmt.Sprintf(`out=$(%s 2>&1); printf '%%s\n' "$out"; case $out in *%q*) ;; *) echo "docs-run: the page says it prints %q" >&2; false ;; esac`, m[1], m[2], m[2])
			}
			b.WriteString(l + "\n")
			at = append(at, fmt.Sprintf("%s:%d", strings.TrimPrefix(page, "../../"), f.line+i))
		}
	}
	return b.String(), at, marked
}

// inSynopsis reports whether line of page is in its "## Synopsis"
// section, whose fence is the command's form, not an example.
func inSynopsis(page string, line int) bool {
	heading := ""
	for _, l := range strings.Split(page, "\n")[:line-1] {
		if strings.HasPrefix(l, "## ") {
			heading = l
		}
	}
	return heading == "## Synopsis"
}

// checkout copies the repository's tracked files into a folder of its
// own and makes it a git checkout with one commit, as a clone is.
func checkout(t *testing.T, files []string) string {
	work := t.TempDir()
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join("../..", f))
		st, serr := os.Stat(filepath.Join("../..", f))
		if err != nil || serr != nil {
			continue // a tracked file deleted in the working tree
		}
		dst := filepath.Join(work, f)
		os.MkdirAll(filepath.Dir(dst), 0o755)
		if err := os.WriteFile(dst, b, st.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=docs", "-c", "user.email=docs@localhost", "commit", "-qm", "docs"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = work
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	return work
}

// goEnv is go env's value of name.
func goEnv(t *testing.T, name string) string {
	out, err := exec.Command("go", "env", name).Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}
