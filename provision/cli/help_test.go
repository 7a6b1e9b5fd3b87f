package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHelpOnStdout: every command's -help, and help CMD, print its usage
// on stdout and exit 0, the same bytes; a refused flag is one line on
// stderr and exits 1; an unknown command names the nearest one.
func TestHelpOnStdout(t *testing.T) {
	for _, cmd := range commands {
		code, out, errOut := runCLI(t, nil, cmd.name, "-help")
		if code != exitOK || !strings.HasPrefix(out, "Usage: provision "+cmd.synopsis) || errOut != "" {
			t.Errorf("%s -help: exit %d, stdout %q, stderr %q", cmd.name, code, firstLine(out), errOut)
		}
		if hcode, hout, _ := runCLI(t, nil, "help", cmd.name); hcode != exitOK || hout != out {
			t.Errorf("help %s: exit %d, not %s -help's text:\n%s", cmd.name, hcode, cmd.name, hout)
		}
	}
	// A refused flag is one line, never the whole usage; one of
	// Terraform's names what comes nearest.
	code, out, errOut := runCLI(t, nil, "plan", "-no-such-flag")
	if code != exitError || out != "" || errOut != "provision plan: -no-such-flag is not an option of provision plan. Run provision plan -help for the options.\n" {
		t.Errorf("a refused flag: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	for _, f := range []string{"-refresh-only", "-compact-warnings", "-parallelism=4", "-state=x"} {
		code, out, errOut := runCLI(t, nil, "plan", f, ".")
		if code != exitError || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "is Terraform's, and provision plan has none: ") {
			t.Errorf("plan %s: exit %d, stdout %q, stderr %q", f, code, out, errOut)
		}
	}
	code, _, errOut = runCLI(t, nil, "plna")
	if code != exitError || !strings.Contains(errOut, `unknown command "plna". Did you mean "plan"?`) {
		t.Errorf("plna: exit %d, %q", code, errOut)
	}
}

// TestChdir: -chdir=DIR before the command runs it in DIR.
func TestChdir(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "specs"), 0o755)
	os.WriteFile(filepath.Join(dir, "specs", "main.hcl"), []byte("project = \"c\"\n"), 0o644)
	wd, _ := os.Getwd()
	t.Cleanup(func() { os.Chdir(wd) })
	code, out, errOut := runCLI(t, nil, "-chdir="+dir, "validate")
	if code != exitOK || !strings.Contains(out, "valid") {
		t.Errorf("-chdir: exit %d\n%s%s", code, out, errOut)
	}
	// A folder of spec files with no specs/ is its own specs, as
	// terraform -chdir=envs/staging plan.
	env := t.TempDir()
	os.WriteFile(filepath.Join(env, "main.hcl"), []byte("project = \"e\"\n"), 0o644)
	if code, out, errOut := runCLI(t, nil, "-chdir="+env, "validate"); code != exitOK || !strings.Contains(out, "The specs in . are valid") {
		t.Errorf("-chdir to a folder of spec files: exit %d\n%s%s", code, out, errOut)
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// TestDestroyFlags: destroy offers only what it takes: no -replace, no
// -prune-indices, and -json without a saved plan.
func TestDestroyFlags(t *testing.T) {
	c := testCLI(nil, nil, nil)
	for _, f := range c.flagsOf("destroy") {
		if f == "-replace" || f == "-prune-indices" {
			t.Errorf("destroy -help offers %s", f)
		}
	}
	if _, out, _ := runCLI(t, nil, "destroy", "-help"); strings.Contains(out, "saved plan") {
		t.Errorf("destroy -help speaks of a saved plan:\n%s", out)
	}
}

// TestVarSource: a -var's error quotes the value given, as a file's
// quotes its line; a sensitive variable's value is never quoted.
func TestVarSource(t *testing.T) {
	code, _, errOut := runCLI(t, map[string]string{"NO_COLOR": "1"}, "validate", "-var", `api_port="x"`, "../../specs")
	if code != exitError || !strings.Contains(errOut, "on <-var api_port> line 1:\n   1: \"x\"") || strings.Contains(errOut, "source code not available") {
		t.Errorf("exit %d\n%s", code, errOut)
	}
}
