package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/provision-dev/provision/provision/cli"
)

// TestShippedLanguage: the binary's own options (the CLI's tests use a
// language made the same way, langtest's) validate the shipped specs,
// which declare every kind and place, and its -target flag names every
// kind's form.
func TestShippedLanguage(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := cli.Run(options(), []string{"validate", "-no-color", "../../specs"}, strings.NewReader(""), &out, &errOut); code != 0 {
		t.Fatalf("validate specs: exit %d\n%s%s", code, out.String(), errOut.String())
	}
	out.Reset()
	cli.Run(options(), []string{"plan", "-help"}, strings.NewReader(""), &out, &errOut)
	for _, form := range []string{"service.<id>", "index[\"<name>\"]", "document[\"<index>/<type>/<id>\"]", "key[\"<path>\"]"} {
		if !strings.Contains(out.String(), form) {
			t.Errorf("plan -help's -target names no %s:\n%s", form, out.String())
		}
	}
}
