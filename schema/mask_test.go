package schema_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision/langtest"
	"github.com/provision-dev/provision/schema"
)

// TestMaskCredentials: the sources diagnostics quote never show a
// credential, and every other byte stays where it was.
func TestMaskCredentials(t *testing.T) {
	dir := t.TempDir()
	src := "project = \"edge\"\n\nservice \"a\" {\n  port = 1\n  frontend {\n    rule = \"Path:/a\"\n    forward_auth {\n" +
		"      address = \"http://admin:hunter2@127.0.0.1:8080/auth?token=s3cret&page=2\"\n    }\n  }\n}\n"
	path := filepath.Join(dir, "main.hcl")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	p := schema.NewParser(langtest.Language)
	_, diags := p.LoadDir(dir, schema.Inputs{})
	if len(diags) != 1 || diags[0].Summary != "Credentials in a spec" {
		t.Fatalf("diagnostics: %s", diags)
	}
	var out bytes.Buffer
	if err := hcl.NewDiagnosticTextWriter(&out, p.Files(), 0, false).WriteDiagnostics(diags); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, secret := range []string{"hunter2", "s3cret"} {
		if strings.Contains(got, secret) {
			t.Errorf("the diagnostic prints %q:\n%s", secret, got)
		}
	}
	if want := `"http://admin:*******@127.0.0.1:8080/auth?token=******&page=2"`; !strings.Contains(got, want) {
		t.Errorf("the snippet lacks %s:\n%s", want, got)
	}
	if masked := string(p.Files()[path].Bytes); len(masked) != len(src) {
		t.Errorf("masking moved the bytes: %d, want %d", len(masked), len(src))
	}
}
