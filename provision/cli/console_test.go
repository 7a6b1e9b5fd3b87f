package cli

import (
	"bytes"
	"strings"
	"testing"
)

// TestConsole: console evaluates a scripted stdin in the shipped specs'
// scope, with no server: a variable, a function, a module output, a
// sensitive variable (never shown); an error is a diagnostic at its line
// and column, and the command exits 1.
func TestConsole(t *testing.T) {
	var stdout, stderr bytes.Buffer
	c := testCLI(strings.NewReader("var.api_port\nupper(\"edge\")\nmodule.gated_api[\"edge\"].service_id\n\nvar.gate_token\nvar.nope\ntry(local.nonexist, \"fallback\")\ntry(var.api_port.x, \"caught\")\n"), &stdout, &stderr)
	c.getenv = func(string) string { return "" }
	c.environ = func() []string { return []string{"PROVISION_VAR_gate_token=s3cret-value"} }
	code := c.run([]string{"console", "../../specs"})
	// try catches a failed evaluation (an attribute of a number), never a
	// name the specs do not declare (local.nonexist), as Terraform's.
	want := "8080\n\"EDGE\"\n\"gated-api-1\"\n(sensitive value)\n\"caught\"\n"
	if code != exitError || stdout.String() != want {
		t.Errorf("exit %d, stdout:\n%s\nwant:\n%s", code, stdout.String(), want)
	}
	if !strings.Contains(stderr.String(), "on <stdin> line 6:") || !strings.Contains(stderr.String(), `This object does not have an attribute named "nope"`) ||
		!strings.Contains(stderr.String(), "on <stdin> line 7:") || !strings.Contains(stderr.String(), `attribute named "nonexist"`) ||
		strings.Contains(stdout.String()+stderr.String(), "s3cret-value") {
		t.Errorf("stderr:\n%s", stderr.String())
	}
}
