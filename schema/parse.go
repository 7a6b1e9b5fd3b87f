package schema

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// chunkMin is the size of a file below which it is parsed in one piece.
var chunkMin = 64 << 10

// piece is a part of a spec file that starts at a top-level item: a
// whole file, or, in a large file, a run of top-level blocks.
type piece struct {
	path  string
	src   []byte
	start hcl.Pos
	// scanned is what the bytes say of the piece's nesting (nestingOf).
	scanned verdict
	// head: the piece may hold more than service, index and document
	// blocks (a piece whose bytes are not found within the limits may
	// hold anything), so it is parsed and decoded before the others.
	head bool
	// plain: the piece's bytes hold no interpolation, directive, call or
	// for expression, so its syntax has nothing for budget.bound to wrap.
	plain bool
	file  *hcl.File
	diags hcl.Diagnostics
}

// specFile is a spec file as read, and the pieces it is parsed in.
type specFile struct {
	path   string
	src    []byte
	pieces []*piece
}

// readFiles reads the spec files and cuts each large one into pieces
// after lines that are a lone "}" (where a top-level block ends), whose
// bytes it reads side by side: hcl's scanner is most of the time a large
// spec takes to load, and it is single-threaded, so the pieces keep every
// core busy. The pieces that hold only services, indices and documents
// can be parsed while the others are decoded (LoadFiles); there are
// sixteen a core, so that the others (the first piece, usually) are
// parsed soon.
func readFiles(paths []string) ([]*specFile, []*piece, hcl.Diagnostics) {
	var diags hcl.Diagnostics
	var files []*specFile
	var all []*piece
	for _, path := range paths {
		src, err := os.ReadFile(path)
		if err != nil {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Failed to read file",
				Detail: fmt.Sprintf("The configuration file %q could not be read.", path)})
			continue
		}
		f := &specFile{path: path, src: src, pieces: cut(path, src, runtime.GOMAXPROCS(0)*16)}
		files = append(files, f)
		all = append(all, f.pieces...)
	}
	spread(len(all), runtime.GOMAXPROCS(0), func(_, lo, hi int) {
		for _, pc := range all[lo:hi] {
			pc.scan()
		}
	})
	return files, all, diags
}

// scan reads the piece's bytes: its nesting, and whether it is a head.
func (pc *piece) scan() {
	pc.scanned = nestingOf(pc.src, specLimits, func(name []byte) {
		switch string(name) {
		case "service", "index", "document":
		default:
			pc.head = true
		}
	})
	pc.head = pc.head || pc.scanned != within
	pc.plain = pc.scanned == within && !bytes.Contains(pc.src, []byte("${")) && !bytes.Contains(pc.src, []byte("%{")) &&
		bytes.IndexByte(pc.src, '(') < 0 && !holdsFor(pc.src)
}

// holdsFor: src holds "for" as a word, as a for expression begins (or
// anywhere else: a string, a comment).
func holdsFor(src []byte) bool {
	for at := 0; ; at += 3 {
		i := bytes.Index(src[at:], []byte("for"))
		if i < 0 {
			return false
		}
		at += i
		if (at == 0 || !isNameByte(src[at-1])) && (at+3 == len(src) || !isNameByte(src[at+3])) {
			return true
		}
	}
}

// plainBodies are the bodies of the plain pieces.
func plainBodies(pieces []*piece) map[hcl.Body]bool {
	out := map[hcl.Body]bool{}
	for _, pc := range pieces {
		if pc.plain && pc.file != nil {
			out[pc.file.Body] = true
		}
	}
	return out
}

// parseAll parses the pieces side by side, in their order, and returns at
// once: heads waits for the first n, all for every piece.
func parseAll(pieces []*piece, n int) (heads, all func()) {
	var first, every sync.WaitGroup
	first.Add(n)
	every.Add(len(pieces))
	var next atomic.Int64
	for range min(runtime.GOMAXPROCS(0), len(pieces)) {
		go func() {
			for i := int(next.Add(1)) - 1; i < len(pieces); i = int(next.Add(1)) - 1 {
				pc := pieces[i]
				pc.file, pc.diags = parseScanned(pc.src, pc.path, pc.start, pc.scanned)
				if i < n {
					first.Done()
				}
				every.Done()
			}
		}()
	}
	return first.Wait, every.Wait
}

// assemble returns the bodies of the parsed files in file order, and
// keeps what diagnostics print of each: its source, masked, and an
// outline of its top-level blocks (the syntax trees are garbage once
// decoded). A cut that is not really at the top level (inside a heredoc,
// a comment or a nested block) leaves the piece before it unterminated,
// which hcl reports; such a file is parsed again in one piece, so that
// its diagnostics are exactly hcl's.
func (p *Parser) assemble(files []*specFile) ([]hcl.Body, hcl.Diagnostics) {
	var diags hcl.Diagnostics
	var bodies []hcl.Body
	for _, sf := range files {
		whole := len(sf.pieces) == 1
		for _, pc := range sf.pieces {
			whole = whole || pc.diags.HasErrors()
		}
		if whole {
			f, fdiags := sf.pieces[0].file, sf.pieces[0].diags
			if len(sf.pieces) > 1 {
				f, fdiags = parseConfig(sf.src, sf.path, hcl.InitialPos)
			}
			p.p.AddFile(sf.path, &hcl.File{Body: hcl.EmptyBody(), Bytes: maskCredentials(sf.src), Nav: outlineOf(f.Body)})
			diags = append(diags, fdiags...)
			bodies = append(bodies, f.Body)
			continue
		}
		var bs []hcl.Body
		for _, pc := range sf.pieces {
			diags = append(diags, pc.diags...)
			bs = append(bs, pc.file.Body)
		}
		p.p.AddFile(sf.path, &hcl.File{Body: hcl.EmptyBody(), Bytes: maskCredentials(sf.src), Nav: outlineOf(bs...)})
		bodies = append(bodies, bs...)
	}
	return bodies, diags
}

// cut splits src after lines that are a lone "}" into at most about n
// pieces of similar size; a small file is one piece.
func cut(path string, src []byte, n int) []*piece {
	if len(src) < chunkMin || n < 2 {
		return []*piece{{path: path, src: src, start: hcl.InitialPos}}
	}
	target := len(src)/n + 1
	var out []*piece
	start, line := 0, 1
	pos, ln := 0, 1
	for pos < len(src) {
		nl := bytes.IndexByte(src[pos:], '\n')
		if nl < 0 {
			break
		}
		end := pos + nl + 1
		isClose := bytes.Equal(bytes.TrimRight(src[pos:end], " \t\r\n"), []byte("}"))
		pos, ln = end, ln+1
		if isClose && pos-start >= target && pos < len(src) {
			out = append(out, &piece{path: path, src: src[start:pos], start: hcl.Pos{Line: line, Column: 1, Byte: start}})
			start, line = pos, ln
		}
	}
	return append(out, &piece{path: path, src: src[start:], start: hcl.Pos{Line: line, Column: 1, Byte: start}})
}

// outline is where each top-level block of a file is and how hcl names
// it ("service \"api\""), so that a diagnostic says which block it is in
// ("on main.hcl line 4, in service \"api\":") without the syntax tree.
type outline []struct {
	rng    hcl.Range
	header string
}

func outlineOf(bodies ...hcl.Body) outline {
	var o outline
	for _, b := range bodies {
		sb, ok := b.(*hclsyntax.Body)
		if !ok {
			continue
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

// spread splits 0..n into at most workers runs of similar length and
// calls f(w, lo, hi) for run w, side by side; it returns when all have.
func spread(n, workers int, f func(w, lo, hi int)) {
	workers = max(1, min(workers, n))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(w, w*n/workers, (w+1)*n/workers)
		}()
	}
	wg.Wait()
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

// parseConfig is hclsyntax.ParseConfig behind the check of the tokens'
// depth: a file nested too deeply is one error and an empty body.
func parseConfig(src []byte, path string, start hcl.Pos) (*hcl.File, hcl.Diagnostics) {
	return parseScanned(src, path, start, nestingOf(src, specLimits, nil))
}

// parseScanned is parseConfig of a file whose bytes were read: a file
// they found within the limits is not lexed twice (tooDeep).
func parseScanned(src []byte, path string, start hcl.Pos, scanned verdict) (*hcl.File, hcl.Diagnostics) {
	if scanned != within {
		if d := tokenNesting(src, path, start, specLimits); d != nil {
			return &hcl.File{Body: &hclsyntax.Body{SrcRange: hcl.Range{Filename: path, Start: start, End: start}}, Bytes: src}, hcl.Diagnostics{d}
		}
	}
	return hclsyntax.ParseConfig(src, path, start)
}
