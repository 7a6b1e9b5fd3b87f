package schema

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"
)

// Format returns src in the canonical layout: hclwrite's indentation and
// alignment of equals signs. A file that does not parse is returned with
// its diagnostics and left unchanged, as is one nested deeper than
// MaxDepth (hclwrite parses with hcl's recursive parser).
func Format(src []byte, filename string) ([]byte, hcl.Diagnostics) {
	if d := tooDeep(src, filename); d != nil {
		return src, hcl.Diagnostics{d}
	}
	f, diags := hclwrite.ParseConfig(src, filename, hcl.InitialPos)
	if diags.HasErrors() {
		return src, diags
	}
	return f.Bytes(), nil
}

// FormatFiles lists the files fmt formats for dir: its .hcl files and
// those of every local module folder they call (source = "./..." or
// "../...", transitively), or, with recursive, every .hcl file under dir
// (its tests and modules included), hidden folders left out. A folder is
// listed once, in the order found.
func FormatFiles(dir string, recursive bool) ([]string, error) {
	if recursive {
		var out []string
		err := filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
			switch {
			case err != nil:
				return err
			case e.IsDir() && path != dir && strings.HasPrefix(e.Name(), "."):
				return filepath.SkipDir
			case !e.IsDir() && strings.HasSuffix(path, ".hcl"):
				out = append(out, path)
			}
			return nil
		})
		return out, err
	}
	var out []string
	seen := map[string]bool{}
	queue := []string{dir}
	for len(queue) > 0 {
		d := filepath.Clean(queue[0])
		queue = queue[1:]
		if seen[d] {
			continue
		}
		seen[d] = true
		files, err := SpecFiles(d)
		if err != nil {
			return nil, err
		}
		out = append(out, files...)
		for _, f := range files {
			queue = append(queue, calledModules(f)...)
		}
	}
	return out, nil
}

var moduleSchema = &hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{{Type: "module", LabelNames: []string{"name"}}}}

// calledModules are the local module folders the file's module blocks
// call, by a literal source; a file that does not parse calls none (fmt
// reports it).
func calledModules(path string) []string {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	f, diags := hclsyntax.ParseConfig(src, path, hcl.InitialPos)
	if diags.HasErrors() {
		return nil
	}
	content, _, _ := f.Body.PartialContent(moduleSchema)
	var out []string
	for _, b := range content.Blocks {
		attrs, _ := b.Body.JustAttributes()
		if a, ok := attrs["source"]; ok {
			if v, d := a.Expr.Value(nil); !d.HasErrors() && v.Type() == cty.String && !v.IsNull() {
				if s := v.AsString(); strings.HasPrefix(s, "./") || strings.HasPrefix(s, "../") {
					out = append(out, filepath.Join(filepath.Dir(path), s))
				}
			}
		}
	}
	return out
}
