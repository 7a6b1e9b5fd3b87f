package schema

import (
	"bytes"
	"fmt"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/provision-dev/provision/provision/parallel"
)

// parseFiles reads the spec files and parses them, in order. Of each
// file p keeps what diagnostics print (its source with the credentials
// masked, and an outline of its top-level blocks), not its syntax tree,
// which is garbage once decoded. A file that cannot be read has no body.
func (p *Parser) parseFiles(paths []string) ([]hcl.Body, hcl.Diagnostics) {
	var bodies []hcl.Body
	var diags hcl.Diagnostics
	for _, path := range paths {
		src, err := ReadConfined(path, filepath.Dir(path))
		if err != nil {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Spec file refused",
				Detail: fmt.Sprintf("The spec file %s.", err)})
			continue
		}
		f, fdiags := parseConfig(src, path)
		diags = append(diags, firstCause(fdiags)...)
		if sb, ok := f.Body.(*hclsyntax.Body); ok && !fdiags.HasErrors() {
			diags = append(diags, consulDefinitions(sb)...)
		}
		p.p.AddFile(path, &hcl.File{Body: hcl.EmptyBody(), Bytes: maskCredentials(src), Nav: outlineOf(f.Body)})
		bodies = append(bodies, f.Body)
	}
	return bodies, diags
}

// firstCause is a file's parse diagnostics up to its first error: the
// errors after it follow from it (one missing quote makes every line
// after it a string) and would only hide it.
func firstCause(diags hcl.Diagnostics) hcl.Diagnostics {
	var out hcl.Diagnostics
	var first *hcl.Diagnostic
	for _, d := range diags {
		switch {
		case d.Severity != hcl.DiagError:
			out = append(out, d)
		case first == nil || d.Subject != nil && first.Subject != nil && d.Subject.Start.Byte < first.Subject.Start.Byte:
			first = d
		}
	}
	if first != nil {
		out = append(out, first)
	}
	return out
}

// outline is where each top-level block of a file is and how hcl names
// it ("service \"api\""), so that a diagnostic says which block it is in
// ("on main.hcl line 4, in service \"api\":") without the syntax tree.
type outline []struct {
	rng    hcl.Range
	header string
}

func outlineOf(body hcl.Body) outline {
	var o outline
	sb, ok := body.(*hclsyntax.Body)
	if !ok {
		return o
	}
	for _, blk := range sb.Blocks {
		header := blk.Type
		for _, l := range blk.Labels {
			header += fmt.Sprintf(" %q", l)
		}
		o = append(o, struct {
			rng    hcl.Range
			header string
		}{blk.Range(), header})
	}
	return o
}

// ContextString is hcl's hook for the "in ..." part of a diagnostic.
func (o outline) ContextString(offset int) string {
	for _, b := range o {
		if b.rng.ContainsOffset(offset) {
			return b.header
		}
	}
	return ""
}

var (
	// userInfo is the user information of a URL: "user:password@" or
	// "token@" after the scheme.
	userInfo = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://([^/?#@\s"'` + "`" + `]+)@`)
	// queryValue is a query parameter of a URL.
	queryValue = regexp.MustCompile(`[?&]([^=&#\s"]+)=([^&#\s"]*)`)
)

// maskCredentials is src with the credentials in its URLs masked, for the
// sources diagnostics quote: a password after "user:" (or the whole user
// information when it is one word, a token), and the value of a query
// parameter named like a secret. Each masked byte becomes "*", so that
// every position a diagnostic points at stays where it was. src itself is
// returned when there is nothing to mask.
func maskCredentials(src []byte) []byte {
	var out []byte
	mask := func(from, to int) {
		if out == nil {
			out = bytes.Clone(src)
		}
		for i := from; i < to; i++ {
			out[i] = '*'
		}
	}
	// Neither pattern spans a line: each runs on the lines that can hold
	// it, which spares a long file of neither most of the matching.
	for at := 0; at < len(src); {
		end := bytes.IndexByte(src[at:], '\n')
		if end < 0 {
			end = len(src)
		} else {
			end += at
		}
		line := src[at:end]
		if bytes.Contains(line, []byte("://")) && bytes.IndexByte(line, '@') >= 0 {
			for _, m := range userInfo.FindAllSubmatchIndex(line, -1) {
				from, to := at+m[2], at+m[3]
				if colon := bytes.IndexByte(src[from:to], ':'); colon >= 0 {
					from += colon + 1
				}
				mask(from, to)
			}
		}
		if bytes.ContainsAny(line, "?&") {
			for _, m := range queryValue.FindAllSubmatchIndex(line, -1) {
				if SensitiveKey.Match(line[m[2]:m[3]]) {
					mask(at+m[4], at+m[5])
				}
			}
		}
		at = end + 1
	}
	if out == nil {
		return src
	}
	return out
}

// pieceBytes is about the size of the pieces a large file is parsed in,
// as many at a time as there are cores. Small pieces share the cores
// evenly to the end and keep each piece's tokens (hcl lexes a piece whole
// before it parses it) small; docs/internals/performance.md has the
// measurements (8 KiB against 2 to 64).
var pieceBytes = 8 << 10

// parseConfig is hclsyntax.ParseConfig behind the checks of limits.go
// (tooDeep): a file nested too deeply, or one that hcl would take
// minutes to lex, is one error and an empty body.
//
// hcl's parse is single-threaded and most of a large spec's load, so a
// file the bytes vouch for is cut where top-level items begin and its
// pieces are parsed side by side. Their bodies are the file's body when
// every piece parses without a diagnostic and no argument is set in two
// of them; any other file is parsed whole, so that its diagnostics are
// exactly hcl's (TestPiecesParseAsTheWhole, FuzzNesting).
func parseConfig(src []byte, path string) (*hcl.File, hcl.Diagnostics) {
	v, at, cuts := nestingOf(src, specLimits, pieceBytes)
	if d := judge(src, path, v, at); d != nil {
		return &hcl.File{Body: &hclsyntax.Body{SrcRange: hcl.Range{Filename: path, Start: hcl.InitialPos, End: hcl.InitialPos}}, Bytes: src}, hcl.Diagnostics{d}
	}
	if body := parsePieces(src, path, cuts); body != nil {
		return &hcl.File{Body: body, Bytes: src}, nil
	}
	return hclsyntax.ParseConfig(src, path, hcl.InitialPos)
}

// parsePieces parses src cut at cuts, side by side, into one body; nil
// when there is no cut, a piece has a diagnostic, or an argument is set
// in two pieces.
func parsePieces(src []byte, path string, cuts []int) *hclsyntax.Body {
	if len(cuts) == 0 {
		return nil
	}
	bounds := append(append([]int{0}, cuts...), len(src))
	bodies := make([]*hclsyntax.Body, len(bounds)-1)
	failed := make([]bool, len(bodies))
	starts := make([]hcl.Pos, len(bodies))
	line := 1
	for i := range bodies {
		starts[i] = hcl.Pos{Line: line, Column: 1, Byte: bounds[i]}
		line += bytes.Count(src[bounds[i]:bounds[i+1]], []byte("\n"))
	}
	parallel.Do(len(bodies), runtime.GOMAXPROCS(0), func(i int) {
		f, diags := hclsyntax.ParseConfig(src[bounds[i]:bounds[i+1]], path, starts[i])
		bodies[i], failed[i] = f.Body.(*hclsyntax.Body), len(diags) > 0
	})
	if slices.Contains(failed, true) {
		return nil
	}
	whole := &hclsyntax.Body{Attributes: hclsyntax.Attributes{}, SrcRange: bodies[len(bodies)-1].SrcRange, EndRange: bodies[len(bodies)-1].EndRange}
	whole.SrcRange.Start = bodies[0].SrcRange.Start
	for _, b := range bodies {
		for name, attr := range b.Attributes {
			if _, twice := whole.Attributes[name]; twice {
				return nil
			}
			whole.Attributes[name] = attr
		}
		whole.Blocks = append(whole.Blocks, b.Blocks...)
	}
	return whole
}
