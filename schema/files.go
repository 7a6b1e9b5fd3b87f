package schema

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
)

// FileFunctions are the functions that read files: only files inside the
// specs' bound (their repository, boundOf), so that a plan depends on
// nothing but the specs (and snapshot, plan -snapshot and provision test
// stay offline and deterministic).
var FileFunctions = []string{"file", "fileexists", "fileset", "templatefile",
	"filebase64", "filemd5", "filesha1", "filesha256", "filesha512", "filebase64sha256", "filebase64sha512"}

// specFiles reads the files the specs name. Paths are relative to the
// root directory of the specs (path.root is "."; path.module is a
// module's directory from there); a path that resolves outside their
// bound (the repository that holds them, boundOf), by "..", an absolute
// path or a symbolic link, is an error, and no error shows what a file
// holds.
type specFiles struct {
	root  string // absolute, symbolic links resolved
	dir   string // as given, which diagnostics name the files by
	bound bound
	// bg bounds the work of the templates rendered, as of the specs.
	bg *budget
	// read is the text of each file read, by its text, for jsondecode to
	// name the file and line of JSON that does not parse.
	mu   sync.Mutex
	read map[string]string
}

func newSpecFiles(dir string, env []string, bg *budget) (*specFiles, error) {
	root, err := filepath.Abs(dir)
	if err == nil {
		if r, err := filepath.EvalSymlinks(root); err == nil {
			root = r
		}
	}
	b, err := boundOf(root, env)
	return &specFiles{root: root, dir: dir, bound: b, bg: bg, read: map[string]string{}}, err
}

// resolve is the file or directory at p under the root, or why not.
func (f *specFiles) resolve(p string) (string, error) {
	if filepath.IsAbs(p) {
		return "", fmt.Errorf("%q is an absolute path; a spec reads only files inside %s, named relative to the specs (path.module, path.root)", p, f.bound.name)
	}
	full := filepath.Join(f.root, filepath.FromSlash(p))
	if !under(f.bound.dir, full) {
		return "", fmt.Errorf("%q is outside %s; a spec reads only files inside it", p, f.bound.name)
	}
	real, err := filepath.EvalSymlinks(full)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return full, err
	case err != nil:
		return "", fmt.Errorf("%q cannot be read: %v", p, unwrapPath(err))
	case !under(f.bound.dir, real):
		return "", fmt.Errorf("%q is a symbolic link to outside %s; a spec reads only files inside it", p, f.bound.name)
	case inGit(f.bound.dir, full) || inGit(f.bound.dir, real):
		// A checkout's .git/config holds the CI's token (actions/checkout's
		// extraheader, GitLab's remote URL): never a spec's to read.
		return "", fmt.Errorf("%q is inside .git; a spec reads nothing of git's own files", p)
	}
	return real, nil
}

// inGit says whether p is in the .git folder of root.
func inGit(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	first, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
	return err == nil && first == ".git"
}

func under(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// unwrapPath is err without the absolute path a *PathError names.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// text reads the file at p: UTF-8 text of at most MaxStringBytes.
func (f *specFiles) text(p string) (string, error) {
	b, err := f.bytes(p)
	if err != nil {
		return "", err
	}
	if !utf8.Valid(b) {
		return "", fmt.Errorf("%q is not UTF-8 text", p)
	}
	s := string(b)
	f.mu.Lock()
	f.read[s] = p
	f.mu.Unlock()
	return s, nil
}

// bytes reads the file at p, of at most MaxStringBytes.
func (f *specFiles) bytes(p string) ([]byte, error) {
	full, err := f.resolve(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("no file %q inside %s", p, f.bound.name)
	}
	if err != nil {
		return nil, err
	}
	if err := regular(full, p); err != nil {
		return nil, err
	}
	return readBounded(full, p)
}

// unquoted takes the values of the references away from each of diags
// whose expression refers to a value that holds a file's text, or a part
// of one: hcl's diagnostic writer would print them ("with local.raw as
// ..."), and no error shows what a file holds.
func (f *specFiles) unquoted(diags hcl.Diagnostics) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.read) == 0 {
		return
	}
	holds := func(v cty.Value) bool {
		found := false
		v, _ = v.UnmarkDeep()
		cty.Walk(v, func(_ cty.Path, v cty.Value) (bool, error) {
			if found || !v.IsKnown() || v.IsNull() || v.Type() != cty.String {
				return !found, nil
			}
			s := v.AsString()
			for text := range f.read {
				if strings.Contains(s, text) || (s != "" && strings.Contains(text, s)) {
					found = true
				}
			}
			return !found, nil
		})
		return found
	}
	for _, d := range diags {
		if d.Expression == nil || d.EvalContext == nil {
			continue
		}
		for _, tr := range d.Expression.Variables() {
			if v, vd := tr.TraverseAbs(d.EvalContext); !vd.HasErrors() && holds(v) {
				d.EvalContext = nil
				break
			}
		}
	}
}

// origin is the file a string was read from; "" when it was not.
func (f *specFiles) origin(s string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.read[s]
}

// functions adds the file functions, and a jsondecode that names the
// file and line of what does not parse, to table, each counted against
// the budget (bg.functions), in the specs and in the templates they
// render.
func (f *specFiles) functions(table map[string]function.Function) map[string]function.Function {
	out := make(map[string]function.Function, len(table)+len(FileFunctions))
	maps.Copy(out, table)
	onePath := []function.Parameter{{Name: "path", Type: cty.String}}
	out["file"] = function.New(&function.Spec{
		Description: "The text of a file of the specs.",
		Params:      onePath,
		Type:        function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			s, err := f.text(args[0].AsString())
			if err != nil {
				return cty.NilVal, err
			}
			return cty.StringVal(s), nil
		},
	})
	out["fileexists"] = function.New(&function.Spec{
		Description: "Whether a file of the specs exists.",
		Params:      onePath,
		Type:        function.StaticReturnType(cty.Bool),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			full, err := f.resolve(args[0].AsString())
			if errors.Is(err, fs.ErrNotExist) {
				return cty.False, nil
			}
			if err != nil {
				return cty.NilVal, err
			}
			info, err := os.Stat(full)
			return cty.BoolVal(err == nil && info.Mode().IsRegular()), nil
		},
	})
	for name, enc := range map[string]func([]byte) string{
		"filebase64":       base64.StdEncoding.EncodeToString,
		"filemd5":          func(b []byte) string { return hex.EncodeToString(digestOf("md5", b)) },
		"filesha1":         func(b []byte) string { return hex.EncodeToString(digestOf("sha1", b)) },
		"filesha256":       func(b []byte) string { return hex.EncodeToString(digestOf("sha256", b)) },
		"filesha512":       func(b []byte) string { return hex.EncodeToString(digestOf("sha512", b)) },
		"filebase64sha256": func(b []byte) string { return base64.StdEncoding.EncodeToString(digestOf("sha256", b)) },
		"filebase64sha512": func(b []byte) string { return base64.StdEncoding.EncodeToString(digestOf("sha512", b)) },
	} {
		out[name] = function.New(&function.Spec{
			Description: "A file of the specs, encoded or digested as Terraform's " + name + ".",
			Params:      onePath,
			Type:        function.StaticReturnType(cty.String),
			Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
				b, err := f.bytes(args[0].AsString())
				if err != nil {
					return cty.NilVal, err
				}
				return cty.StringVal(enc(b)), nil
			},
		})
	}
	out["fileset"] = function.New(&function.Spec{
		Description: "The files under a directory of the specs whose paths match a pattern (*, ?, [...] within a name; ** across directories).",
		Params:      []function.Parameter{{Name: "path", Type: cty.String}, {Name: "pattern", Type: cty.String}},
		Type:        function.StaticReturnType(cty.Set(cty.String)),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			return f.fileset(args[0].AsString(), args[1].AsString())
		},
	})
	// jsondecode's type is its value's, so the JSON is parsed to find it.
	where := func(args []cty.Value, err error) error {
		if err != nil && args[0].IsKnown() && !args[0].IsNull() && !args[0].IsMarked() {
			if from := f.origin(args[0].AsString()); from != "" {
				return jsonError(from, args[0].AsString())
			}
		}
		return err
	}
	out["jsondecode"] = function.New(&function.Spec{
		Description: stdlib.JSONDecodeFunc.Description(),
		Params:      stdlib.JSONDecodeFunc.Params(),
		Type: func(args []cty.Value) (cty.Type, error) {
			t, err := stdlib.JSONDecodeFunc.ReturnTypeForValues(args)
			return t, where(args, err)
		},
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			v, err := stdlib.JSONDecodeFunc.Call(args)
			return v, where(args, err)
		},
	})
	out = f.bg.functions(out)
	inner := maps.Clone(out) // a template renders no template: no recursion
	out["templatestring"] = f.bg.bounded("templatestring", function.New(&function.Spec{
		Description: "A string rendered as a template, with the variables of an object (Terraform's templatestring).",
		Params:      []function.Parameter{{Name: "template", Type: cty.String}, {Name: "vars", Type: cty.DynamicPseudoType}},
		Type:        function.StaticReturnType(cty.DynamicPseudoType),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			return f.render(args[0].AsString(), "the template string", args[1], inner)
		},
	}))
	out["templatefile"] = f.bg.bounded("templatefile", function.New(&function.Spec{
		Description: "A file of the specs rendered as a template, with the variables of an object.",
		Params:      []function.Parameter{{Name: "path", Type: cty.String}, {Name: "vars", Type: cty.DynamicPseudoType}},
		Type:        function.StaticReturnType(cty.DynamicPseudoType),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			return f.template(args[0].AsString(), args[1], inner)
		},
	}))
	return out
}

// jsonError says where the JSON text of the file from does not parse.
func jsonError(from, text string) error {
	var v any
	err := json.Unmarshal([]byte(text), &v)
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		return fmt.Errorf("%s does not hold one JSON value: %v", from, err)
	}
	at := max(se.Offset-1, 0) // the offending byte: Offset bytes were read
	line := 1 + strings.Count(text[:at], "\n")
	col := int(at) - strings.LastIndex(text[:at], "\n")
	return fmt.Errorf("%s:%d,%d: the JSON does not parse: %v", from, line, col, se)
}

// fileset lists the files under dir whose paths (from dir, with "/")
// match pattern, as Terraform's fileset; a pattern that matches nothing
// is an error (a typo would otherwise declare nothing, and a plan would
// delete what the files declared).
func (f *specFiles) fileset(dir, pattern string) (cty.Value, error) {
	// Unlike Terraform's (the empty set), a folder that is not there or a
	// pattern that matches nothing is an error: a typo would otherwise
	// declare nothing, and the plan delete what the files declared.
	full, err := f.resolve(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return cty.NilVal, fmt.Errorf("no directory %q inside %s", dir, f.bound.name)
	}
	if err != nil {
		return cty.NilVal, err
	}
	re, err := globRegexp(pattern)
	if err != nil {
		return cty.NilVal, fmt.Errorf("the pattern %q: %v", pattern, err)
	}
	var found []cty.Value
	err = filepath.WalkDir(full, func(p string, e fs.DirEntry, err error) error {
		if err != nil || !e.Type().IsRegular() {
			return err
		}
		rel, _ := filepath.Rel(full, p)
		if rel = filepath.ToSlash(rel); re.MatchString(rel) {
			found = append(found, cty.StringVal(rel))
		}
		return nil
	})
	if err != nil {
		return cty.NilVal, fmt.Errorf("%q cannot be listed: %v", dir, unwrapPath(err))
	}
	if len(found) == 0 {
		return cty.NilVal, fmt.Errorf("the pattern %q matches no file under %q", pattern, dir)
	}
	return cty.SetVal(found), nil
}

// globRegexp turns a glob into a regular expression of whole paths: *
// and ? within one name, [...] a class, ** any number of directories.
func globRegexp(pattern string) (*regexp.Regexp, error) {
	if _, err := path.Match(strings.ReplaceAll(pattern, "**", "*"), ""); err != nil {
		return nil, err
	}
	body, err := globBody(pattern)
	if err != nil {
		return nil, err
	}
	return regexp.Compile("^" + body + "$")
}

// globBody is the regular expression of a glob pattern: *, ? and [...]
// within a name, ** across directories, {a,b} either (Terraform's
// fileset, after doublestar).
func globBody(pattern string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(pattern); i++ {
		switch c := pattern[i]; {
		case strings.HasPrefix(pattern[i:], "**/"):
			b.WriteString("(?:.*/)?")
			i += 2
		case strings.HasPrefix(pattern[i:], "**"):
			b.WriteString(".*")
			i++
		case c == '*':
			b.WriteString("[^/]*")
		case c == '?':
			b.WriteString("[^/]")
		case c == '[':
			j := strings.IndexByte(pattern[i:], ']')
			if j < 0 {
				return "", fmt.Errorf("the pattern %q has a [ without its ]", pattern)
			}
			b.WriteString(strings.Replace(pattern[i:i+j+1], "[!", "[^", 1))
			i += j
		case c == '{':
			alts, n, err := alternatives(pattern[i:])
			if err != nil {
				return "", err
			}
			var bodies []string
			for _, a := range alts {
				body, err := globBody(a)
				if err != nil {
					return "", err
				}
				bodies = append(bodies, body)
			}
			b.WriteString("(?:" + strings.Join(bodies, "|") + ")")
			i += n - 1
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	return b.String(), nil
}

// alternatives splits the {a,b,...} that s starts with at its top-level
// commas, and says how many bytes it takes.
func alternatives(s string) ([]string, int, error) {
	depth, start := 0, 1
	var alts []string
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[': // a comma in a class is the class's
			if j := strings.IndexByte(s[i:], ']'); j > 0 {
				i += j
			}
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return append(alts, s[start:i]), i + 1, nil
			}
		case ',':
			if depth == 1 {
				alts = append(alts, s[start:i])
				start = i + 1
			}
		}
	}
	return nil, 0, fmt.Errorf("the pattern %q has a { without its }", s)
}

// template renders the file at p as an HCL template with vars, an object
// or a map, and the functions of the specs.
func (f *specFiles) template(p string, vars cty.Value, functions map[string]function.Function) (cty.Value, error) {
	text, err := f.text(p)
	if err != nil {
		return cty.NilVal, err
	}
	return f.render(text, p, vars, functions)
}

// render renders text, a template named p, with vars.
func (f *specFiles) render(text, p string, vars cty.Value, functions map[string]function.Function) (cty.Value, error) {
	if !vars.Type().IsObjectType() && !vars.Type().IsMapType() {
		return cty.NilVal, fmt.Errorf("the variables of a template are an object, as { name = \"edge\" }")
	}
	expr, diags := hclsyntax.ParseTemplate([]byte(text), p, hcl.InitialPos)
	if diags.HasErrors() {
		return cty.NilVal, fmt.Errorf("%s", diags.Errs()[0])
	}
	f.bg.boundNode(expr)
	values := map[string]cty.Value{}
	for it := vars.ElementIterator(); it.Next(); {
		k, v := it.Element()
		values[k.AsString()] = v
	}
	for _, tr := range expr.Variables() {
		if _, ok := values[tr.RootName()]; !ok {
			names := slices.Sorted(func(yield func(string) bool) {
				for k := range values {
					if !yield(k) {
						return
					}
				}
			})
			return cty.NilVal, fmt.Errorf("%s refers to %q, which the variables (%s) do not hold", p, tr.RootName(), strings.Join(names, ", "))
		}
	}
	v, diags := expr.Value(&hcl.EvalContext{Variables: values, Functions: functions})
	if diags.HasErrors() {
		return cty.NilVal, fmt.Errorf("%s", diags.Errs()[0])
	}
	if v.Type() == cty.String && v.IsKnown() && !v.IsNull() && !v.IsMarked() {
		// What it renders is a file's text too: jsondecode names where it
		// does not parse, and no error shows it.
		f.mu.Lock()
		f.read[v.AsString()] = p + " (as rendered)"
		f.mu.Unlock()
	}
	return v, nil
}
