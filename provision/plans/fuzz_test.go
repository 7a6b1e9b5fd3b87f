package plans_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/provision-dev/provision/provision/cli/render"
	"github.com/provision-dev/provision/provision/fuzzing"
	"github.com/provision-dev/provision/provision/langtest"
	"github.com/provision-dev/provision/provision/plans"
)

// FuzzReadPlanFile reads arbitrary plan files: it must never panic, and a
// plan it accepts renders in every view without panicking.
func FuzzReadPlanFile(f *testing.F) {
	f.Add([]byte(`{"format_version":"1.1","project":"p","changes":[{"address":"service.a","backend":"consul","action":"update",` +
		`"before":{"Port":1,"Tags":["x"]},"after":{"Port":2,"Tags":["x","y"]},"requests":[{"method":"PUT","path":"/v1/agent/service/register",` +
		`"body":{"ID":"a","token":"t"}}],"declared_at":"f.hcl:1,1-2"}],"summary":{"update":1}}`))
	f.Add([]byte(`{"format_version":"1.1","changes":[{"address":"index[\".d\"]","action":"import","after":{"mappings":{}}}]}`))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, src []byte) {
		fuzzing.Bounded(t, src, func(t testing.TB) {
			path := filepath.Join(dir, "fuzz.plan")
			if err := os.WriteFile(path, src, 0o600); err != nil {
				t.Fatal(err)
			}
			p, err := plans.ReadPlanFile(path, langtest.Kinds)
			if err != nil {
				return
			}
			var out bytes.Buffer
			_ = render.Text(&out, p.Redacted(), render.TextOptions{})
			_ = render.Markdown(p.Redacted())
			_ = render.DOT(&out, p)
			for _, c := range p.Changes {
				if c != nil {
					c.DeclRange()
				}
			}
		})
	})
}
