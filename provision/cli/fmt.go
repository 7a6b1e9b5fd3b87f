package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision/run"
	"github.com/provision-dev/provision/schema"
	"github.com/rogpeppe/go-internal/diff"
)

// exitUnformatted is fmt -check's code for files not in canonical layout.
const exitUnformatted = 3

func (c *cli) fmt(args []string) int {
	var a fmtArgs
	pos, code, ok := c.args("fmt", &a, args, 1, nil)
	if !ok {
		return code
	}
	v := fmtView{c.textView(true)}
	paths, err := schema.FormatFiles(dirArg(pos), a.recursive)
	if err != nil {
		v.Diagnostics(run.Refusal("Cannot read the specs", err.Error()+".", nil))
		return exitError
	}
	var diags hcl.Diagnostics
	files := map[string]*hcl.File{}
	unformatted := false
	for _, path := range paths {
		src, err := schema.ReadConfined(path, filepath.Dir(path))
		if err != nil {
			v.Diagnostics(run.Refusal("Spec file refused", "The spec file "+err.Error()+".", nil))
			return exitError
		}
		out, fdiags := schema.Format(src, path)
		if fdiags.HasErrors() {
			diags = append(diags, fdiags...)
			files[path] = &hcl.File{Bytes: src}
			continue
		}
		if bytes.Equal(src, out) {
			continue
		}
		unformatted = true
		var d []byte
		if a.diff {
			d = diff.Diff(path, src, path+" (formatted)", out)
		}
		v.unformatted(path, d)
		if !a.check {
			if err := os.WriteFile(path, out, 0o644); err != nil {
				v.Diagnostics(run.Refusal("Cannot write a spec", err.Error()+".", nil))
				return exitError
			}
		}
	}
	if diags.HasErrors() {
		v.Loaded(files, nil)
		v.Diagnostics(diags)
		return exitError
	}
	if a.check && unformatted {
		return exitUnformatted
	}
	return exitOK
}

// fmtView lists the files not in canonical layout, each with its diff
// when asked, on stdout; diagnostics on stderr.
type fmtView struct{ *textView }

func (v fmtView) unformatted(path string, diff []byte) {
	fmt.Fprintln(v.o.stdout, path)
	v.o.stdout.Write(diff)
}
