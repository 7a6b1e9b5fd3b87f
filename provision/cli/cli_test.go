package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/provision-dev/provision/provision"
	"github.com/provision-dev/provision/provision/addrs"
	"github.com/provision-dev/provision/provision/consul"
	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/provision/run"
)

// TestColor: colour only on a terminal, and never with NO_COLOR or
// -no-color.
func TestColor(t *testing.T) {
	for _, tt := range []struct {
		name              string
		terminal, noColor bool
		env               string
		want              bool
	}{
		{"terminal", true, false, "", true},
		{"pipe", false, false, "", false},
		{"NO_COLOR", true, false, "1", false},
		{"-no-color", true, true, "", false},
	} {
		c := testCLI(strings.NewReader(""), &bytes.Buffer{}, &bytes.Buffer{})
		c.isTerminal = func(any) bool { return tt.terminal }
		c.getenv = func(k string) string {
			if k == "NO_COLOR" {
				return tt.env
			}
			return ""
		}
		if got := c.color(c.stdout, tt.noColor); got != tt.want {
			t.Errorf("%s: color = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestConfirm: on a terminal only "yes" goes ahead.
func TestConfirm(t *testing.T) {
	for answer, want := range map[string]bool{"yes\n": true, "y\n": false, "\n": false, "YES\n": false} {
		var out, errOut bytes.Buffer
		c := testCLI(strings.NewReader(answer), &out, &errOut)
		c.isTerminal = func(any) bool { return true }
		if got := asker(c).Confirm(context.Background(), nil); got != want {
			t.Errorf("answer %q: confirm = %v, want %v", answer, got, want)
		}
		if !want && !strings.Contains(errOut.String(), "Cancelled: nothing was sent.") {
			t.Errorf("answer %q: no cancellation message", answer)
		}
	}
}

// asker is apply's human view, as the command makes it.
func asker(c *cli) *humanApply {
	return &humanApply{textView: c.textView(false), command: "apply", question: "Do you want to perform these actions?"}
}

// TestConfirmInterrupted: an interrupt at the prompt cancels at once,
// although no answer ever comes.
func TestConfirmInterrupted(t *testing.T) {
	var out, errOut bytes.Buffer
	pr, pw := io.Pipe()
	defer pw.Close()
	c := testCLI(pr, &out, &errOut)
	c.isTerminal = func(any) bool { return true }
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("interrupted"))
	if asker(c).Confirm(ctx, nil) {
		t.Fatal("confirm went ahead after an interrupt")
	}
	if !strings.Contains(errOut.String(), "Cancelled (interrupted): nothing was sent.") {
		t.Errorf("stderr: %q", errOut.String())
	}
}

// TestProgressLine: on a terminal, apply shows one progress line with the
// counts, the rate and the time left, instead of a line per request.
func TestProgressLine(t *testing.T) {
	var out, errOut bytes.Buffer
	c := testCLI(strings.NewReader(""), &out, &errOut)
	c.isTerminal = func(s any) bool { return s == &errOut }
	v := asker(c)
	v.live = true
	ch := &plans.Change{Addr: addrs.Addr{Kind: consul.Service, Name: "a"}, Requests: []plans.Request{{Method: "PUT", Path: "/x"}}}
	for n := 1; n <= 3; n++ {
		v.Progress(run.Progress{Event: provision.Event{Change: ch, Step: 1, Request: ch.Requests[0], Done: true, Elapsed: time.Millisecond}, Done: n, Total: 3})
	}
	if out.Len() != 0 {
		t.Errorf("per-request lines on a terminal: %q", out.String())
	}
	if got := errOut.String(); !strings.Contains(got, "\r\x1b[K1/3 requests sent, ") || !strings.HasSuffix(got, " left\n") || !strings.Contains(got, "3/3 requests sent") {
		t.Errorf("progress line: %q", got)
	}
}

// TestWantsJSON: the arguments that ask for JSON, so that a refused flag
// is a JSON diagnostic; a directory named json does not.
func TestWantsJSON(t *testing.T) {
	for args, want := range map[string]bool{
		"-json": true, "--json": true, "-json=true": true, "-json=1": true, "specs -json": true, "-format=json": true, "--format=json": true,
		"-json=false": false, "json": false, "specs": false, "-format=text": false, "-- -json": false, "-jsonx": false,
	} {
		if got := wantsJSON(strings.Fields(args)); got != want {
			t.Errorf("wantsJSON(%s) = %v, want %v", args, got, want)
		}
	}
}

// TestUpToQuotesAsWhole: a diagnostic written with its file cut after the
// last line it quotes (upTo) reads as with the whole file: a subject on
// the first line, one with a context over several lines, one on the last
// line of a file without a final newline.
func TestUpToQuotesAsWhole(t *testing.T) {
	src := "project = \"x\"\n\nservice \"a\" {\n  port = 70000\n  tags = [\n    \"a\",\n  ]\n}\n\nservice \"b\" {\n  port = 1\n}"
	f, diags := hclsyntax.ParseConfig([]byte(src), "main.hcl", hcl.InitialPos)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	files := map[string]*hcl.File{"main.hcl": f}
	at := func(startLine, startCol, startByte, endLine, endCol, endByte int) *hcl.Range {
		return &hcl.Range{Filename: "main.hcl", Start: hcl.Pos{Line: startLine, Column: startCol, Byte: startByte}, End: hcl.Pos{Line: endLine, Column: endCol, Byte: endByte}}
	}
	for _, d := range []*hcl.Diagnostic{
		{Severity: hcl.DiagWarning, Summary: "first line", Subject: at(1, 1, 0, 1, 8, 7)},
		{Severity: hcl.DiagError, Summary: "with a context", Subject: at(4, 10, 38, 4, 15, 43), Context: at(3, 1, 15, 8, 2, 69)},
		{Severity: hcl.DiagError, Summary: "last line", Subject: at(12, 1, strings.LastIndex(src, "}"), 12, 2, len(src))},
	} {
		var whole, cut strings.Builder
		hcl.NewDiagnosticTextWriter(&whole, files, 0, false).WriteDiagnostic(d)
		hcl.NewDiagnosticTextWriter(&cut, upTo(files, d), 0, false).WriteDiagnostic(d)
		if whole.String() != cut.String() || !strings.Contains(whole.String(), "on main.hcl line") || !strings.Contains(whole.String(), ": ") {
			t.Errorf("%s: cut\n%s\nwhole\n%s", d.Summary, cut.String(), whole.String())
		}
	}
}

// TestVersion: version says the build's Go and platform, in text and
// JSON; provision/internal/release's test checks a released binary's
// version and revision.
func TestVersion(t *testing.T) {
	code, out, _ := runCLI(t, nil, "version", "-json")
	var b build
	if err := json.Unmarshal([]byte(out), &b); code != 0 || err != nil {
		t.Fatalf("version -json: exit %d, %v\n%s", code, err, out)
	}
	if b.Version != "dev" || b.Go != runtime.Version() || b.Platform != runtime.GOOS+"/"+runtime.GOARCH || b.Module != "github.com/provision-dev/provision" {
		t.Errorf("version -json: %+v", b)
	}
	for _, args := range [][]string{{"version"}, {"-version"}} {
		code, out, _ := runCLI(t, nil, args...)
		if code != 0 || !strings.HasPrefix(out, "provision dev\n") || !strings.Contains(out, "built with "+runtime.Version()) {
			t.Errorf("%v: exit %d\n%s", args, code, out)
		}
	}
	if code, _, _ := runCLI(t, nil, "version", "extra"); code != exitError {
		t.Errorf("version extra: exit %d, want %d", code, exitError)
	}
}
