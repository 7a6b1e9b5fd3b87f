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
//
// With later (the root's files), the pieces of a large file that hold
// only object blocks of one class are not parsed here but returned, in
// file order, for the decoder to parse when it decodes their blocks and
// to let go of once it has (parseLater): at 100,000 services their
// syntax trees, held all at once, were most of a load's memory.
func (p *Parser) parseFiles(paths []string, later func(name []byte) class) ([]hcl.Body, []*piece, hcl.Diagnostics) {
	var bodies []hcl.Body
	var pieces []*piece
	var diags hcl.Diagnostics
	var files []scanned
	calls := false
	for _, path := range paths {
		src, err := ReadConfined(path, filepath.Dir(path))
		if err != nil {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Spec file refused",
				Detail: fmt.Sprintf("The spec file %s.", err)})
			continue
		}
		f := scan(src, path, later)
		calls = calls || f.calls
		files = append(files, f)
	}
	for _, f := range files {
		if calls {
			// A root that calls a module decodes its objects in order
			// with the calls (evalInOrder): every piece now.
			f.classes = nil
		}
		file, deferred, fdiags := f.parse()
		diags = append(diags, firstCause(fdiags)...)
		if sb, ok := file.Body.(*hclsyntax.Body); ok && !fdiags.HasErrors() {
			diags = append(diags, p.lang.rewrite(sb)...)
		}
		o := outlineOf(file.Body)
		p.p.AddFile(f.path, &hcl.File{Body: hcl.EmptyBody(), Bytes: maskCredentials(f.src), Nav: o})
		for _, pc := range deferred {
			pc.outline = o
		}
		bodies, pieces = append(bodies, file.Body), append(pieces, deferred...)
	}
	return bodies, pieces, diags
}

// class is what a piece of a file holds, as parseFiles sorts them: items
// of any kind (now, parsed with the file), or only blocks of the early
// object kinds (indices), or only blocks of the other object kinds.
type class int

const (
	unseen class = iota - 1 // a piece no item of which is read yet
	now
	earlyObjects
	lateObjects
)

// A piece is a part of a spec file, from one top-level item to another,
// whose blocks are parsed when they are decoded: its source, where it
// begins, and its class.
type piece struct {
	path    string
	src     []byte
	start   hcl.Pos
	class   class
	outline *outline // its file's, which its blocks join once parsed
}

// parseLater parses pieces side by side and gives their bodies, their
// blocks bounded by bg, each with its file's Consul definitions read
// (rewrite) and its blocks in its file's outline. ok is false
// when a piece has a diagnostic or an argument: its file is one to parse
// whole, as hcl does, for its diagnostics (scanned.parse).
func (lang *Language) parseLater(pieces []*piece, bg *budget) (bodies []*hclsyntax.Body, diags hcl.Diagnostics, ok bool) {
	bodies = make([]*hclsyntax.Body, len(pieces))
	failed := make([]bool, len(pieces))
	parallel.Do(len(pieces), runtime.GOMAXPROCS(0), func(i int) {
		f, pdiags := hclsyntax.ParseConfig(pieces[i].src, pieces[i].path, pieces[i].start)
		bodies[i] = f.Body.(*hclsyntax.Body)
		failed[i] = len(pdiags) > 0 || len(bodies[i].Attributes) > 0
		if !failed[i] {
			for _, blk := range bodies[i].Blocks {
				bg.boundNode(blk)
			}
		}
	})
	if slices.Contains(failed, true) {
		return nil, nil, false
	}
	for i, b := range bodies {
		diags = append(diags, lang.rewrite(b)...)
		*pieces[i].outline = append(*pieces[i].outline, *outlineOf(b)...)
	}
	return bodies, diags, true
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

func outlineOf(body hcl.Body) *outline {
	o := &outline{}
	sb, ok := body.(*hclsyntax.Body)
	if !ok {
		return o
	}
	for _, blk := range sb.Blocks {
		header := blk.Type
		for _, l := range blk.Labels {
			header += fmt.Sprintf(" %q", l)
		}
		*o = append(*o, struct {
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

// scanned is a spec file read by nestingOf, before hcl parses it: where
// it may be cut and, with later, the class of each piece (parseFiles)
// and whether it calls a module.
type scanned struct {
	src     []byte
	path    string
	v       verdict
	at      int
	cuts    []int
	classes []class
	calls   bool
}

// scan reads src with nestingOf; with later, each piece's class is
// later's of the first name of each of its items when they agree, now
// otherwise.
func scan(src []byte, path string, later func(name []byte) class) scanned {
	f := scanned{src: src, path: path}
	var first func(piece int, name []byte)
	if later != nil {
		first = func(piece int, name []byte) {
			for len(f.classes) <= piece {
				f.classes = append(f.classes, unseen)
			}
			switch c := later(name); {
			case f.classes[piece] == unseen:
				f.classes[piece] = c
			case f.classes[piece] != c:
				f.classes[piece] = now
			}
			f.calls = f.calls || string(name) == "module"
		}
	}
	f.v, f.at, f.cuts = nestingOf(src, specLimits, pieceBytes, first)
	return f
}

// parse is hclsyntax.ParseConfig of the scanned file behind the checks of limits.go
// (tooDeep): a file nested too deeply, or one that hcl would take
// minutes to lex, is one error and an empty body.
//
// hcl's parse is single-threaded and most of a large spec's load, so a
// file the bytes vouch for is cut where top-level items begin and its
// pieces are parsed side by side. Their bodies are the file's body when
// every piece parses without a diagnostic and no argument is set in two
// of them; any other file is parsed whole, so that its diagnostics are
// exactly hcl's (TestPiecesParseAsTheWhole, FuzzNesting).
// With classes, the pieces whose class is not now are not parsed but
// returned.
func (f scanned) parse() (*hcl.File, []*piece, hcl.Diagnostics) {
	if d := judge(f.src, f.path, f.v, f.at); d != nil {
		return &hcl.File{Body: &hclsyntax.Body{SrcRange: hcl.Range{Filename: f.path, Start: hcl.InitialPos, End: hcl.InitialPos}}, Bytes: f.src}, nil, hcl.Diagnostics{d}
	}
	if body, deferred := parsePieces(f.src, f.path, f.cuts, f.classes); body != nil {
		return &hcl.File{Body: body, Bytes: f.src}, deferred, nil
	}
	file, diags := hclsyntax.ParseConfig(f.src, f.path, hcl.InitialPos)
	return file, nil, diags
}

// parsePieces parses src cut at cuts, side by side, into one body; nil
// when there is no cut, a piece has a diagnostic, or an argument is set
// in two pieces. A piece whose class (in classes, by piece) is not now
// is not parsed but returned; the last piece is always parsed, for
// where the file's body ends.
func parsePieces(src []byte, path string, cuts []int, classes []class) (*hclsyntax.Body, []*piece) {
	if len(cuts) == 0 {
		return nil, nil
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
	var deferred []*piece
	var parse []int
	for i := range bodies {
		if i < len(classes) && classes[i] > now && i < len(bodies)-1 {
			deferred = append(deferred, &piece{path: path, src: src[bounds[i]:bounds[i+1]], start: starts[i], class: classes[i]})
			continue
		}
		parse = append(parse, i)
	}
	parallel.Do(len(parse), runtime.GOMAXPROCS(0), func(j int) {
		i := parse[j]
		f, diags := hclsyntax.ParseConfig(src[bounds[i]:bounds[i+1]], path, starts[i])
		bodies[i], failed[i] = f.Body.(*hclsyntax.Body), len(diags) > 0
	})
	if slices.Contains(failed, true) {
		return nil, nil
	}
	last := bodies[len(bodies)-1]
	whole := &hclsyntax.Body{Attributes: hclsyntax.Attributes{}, SrcRange: last.SrcRange, EndRange: last.EndRange}
	whole.SrcRange.Start = starts[0]
	if bodies[0] != nil {
		whole.SrcRange.Start = bodies[0].SrcRange.Start
	}
	for _, i := range parse {
		for name, attr := range bodies[i].Attributes {
			if _, twice := whole.Attributes[name]; twice {
				return nil, nil
			}
			whole.Attributes[name] = attr
		}
		whole.Blocks = append(whole.Blocks, bodies[i].Blocks...)
	}
	return whole, deferred
}
