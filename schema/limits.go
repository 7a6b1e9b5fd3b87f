package schema

import (
	"bytes"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/provision-dev/provision/provision/parallel"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
)

// The work one load of the specs may ask for. A spec is a program: a few
// characters of nested for expressions, range, setproduct or replace ask
// for billions of values, and a pipeline validates pull requests from
// anyone. Past a limit, the load stops with an error at the expression
// that crossed it, in milliseconds rather than minutes of CPU or an
// out-of-memory kill. The limits are far above what a real estate needs
// (the benchmarks declare 10,000 services from one local map, which
// builds about 20,000 values).
const (
	// MaxValues is how many values the for expressions and the functions
	// of one load may build in all: each element a for expression
	// iterates over, each element and string of a function's result.
	MaxValues = 1_000_000
	// MaxStringBytes is how many bytes of strings the functions of one
	// load may build in all.
	MaxStringBytes = 64 << 20
	// MaxDepth is how deeply brackets, braces, parentheses,
	// interpolations, conditionals and "!" may nest in one expression.
	MaxDepth = 64
	// MaxOperators is how many operators one expression may chain
	// (a + b + ...): hcl parses and evaluates a chain recursively, and a
	// million of them overflow the stack.
	MaxOperators = 1000
	// MaxHeredocLines is how many lines one heredoc may hold: hcl joins
	// them in time that grows with the square of their number.
	MaxHeredocLines = 10000
)

// budget is what is left of the limits in one load. The first
// expression to go over says so; from then on every counted expression
// and function is unknown without a word, so that evaluation ends fast
// and the load reports one error, not one per iteration.
type budget struct {
	values, bytes atomic.Int64
	spent         atomic.Bool
}

// unreported is the error of a load whose budget ran out where no error
// says so: inside can or try, which turn an error into a value. Every
// counted value after that was unknown, so the load must fail.
func (bg *budget) unreported(diags hcl.Diagnostics, at hcl.Range) hcl.Diagnostics {
	if !bg.spent.Load() || diags.HasErrors() {
		return nil
	}
	return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Spec asks for too much work", Subject: at.Ptr(),
		Detail: fmt.Sprintf("An expression inside can or try asked for more than the limits of one load of the specs (MaxValues %s, MaxStringBytes %d MiB); can and try hide that error, but what was built after it is not known, so the specs cannot be used. Declare fewer values.", thousands(MaxValues), MaxStringBytes>>20)}}
}

// take counts n values and b bytes; past a limit it returns the error to
// report (once: "" after the first).
func (bg *budget) take(n, b int64) (string, bool) {
	values, bytes := bg.values.Add(n), bg.bytes.Add(b)
	var why string
	switch {
	case values > MaxValues:
		why = fmt.Sprintf("more than %s values (MaxValues, the limit of one load of the specs)", thousands(MaxValues))
	case bytes > MaxStringBytes:
		why = fmt.Sprintf("more than %d MiB of strings (MaxStringBytes, the limit of one load of the specs)", MaxStringBytes>>20)
	default:
		return "", true
	}
	if bg.spent.Swap(true) {
		return "", false
	}
	return why, false
}

func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// bound counts, against bg, the collection of every for expression of
// body and the strings every template interpolates, and passes long
// tuples to functions as lists. (How deep expressions nest is checked
// before they are parsed, on the bytes or the tokens: tooDeep.) The walk
// visits every node of the file, so a file's blocks are walked side by
// side: each block's nodes are its own.
func (bg *budget) bound(body hcl.Body) {
	sb, ok := body.(*hclsyntax.Body)
	if !ok {
		return
	}
	for _, attr := range sb.Attributes {
		bg.boundNode(attr)
	}
	parallel.Spread(len(sb.Blocks), func(i int) { bg.boundNode(sb.Blocks[i]) })
}

// boundNode is bound of one node: a body, or a template a spec renders
// from a file (templatefile).
func (bg *budget) boundNode(n hclsyntax.Node) {
	w := &boundWalker{}
	hclsyntax.Walk(n, w)
	for _, f := range w.fors {
		f.CollExpr = bg.count(f.CollExpr, false)
	}
	for _, t := range w.templates {
		for i, part := range t.Parts {
			if _, literal := part.(*hclsyntax.LiteralValueExpr); !literal {
				t.Parts[i] = bg.count(part, true)
			}
		}
	}
	for _, call := range w.calls {
		f, ok := Functions[call.Name]
		if !ok {
			continue
		}
		for i, arg := range call.Args {
			p := f.VarParam()
			if i < len(f.Params()) {
				p = &f.Params()[i]
			}
			if p != nil && (p.Type.IsListType() || p.Type.IsSetType()) {
				call.Args[i] = &asList{Expression: &hclsyntax.ParenthesesExpr{Expression: arg, SrcRange: arg.Range()}}
			}
		}
	}
}

// maxMixedTuple bounds a tuple of values of several types passed where a
// list is expected: cty unifies their types pair by pair, in time that
// grows with the square of their number.
const maxMixedTuple = 1024

// asList is a function argument whose parameter is a list or a set. cty
// converts a tuple there by unifying its element types pair by pair, even
// when they are all one type, in time that grows with the square of its
// length: such a tuple is made a list here, in linear time, and a long
// tuple of several types is refused.
type asList struct {
	hclsyntax.Expression
}

func (a *asList) Value(ctx *hcl.EvalContext) (cty.Value, hcl.Diagnostics) {
	v, diags := a.Expression.Value(ctx)
	if diags.HasErrors() || !v.Type().IsTupleType() || v.IsMarked() || !v.IsKnown() || v.IsNull() || v.LengthInt() <= 64 {
		return v, diags
	}
	types := v.Type().TupleElementTypes()
	if !slices.ContainsFunc(types, func(t cty.Type) bool { return !t.Equals(types[0]) }) {
		return cty.ListVal(v.AsValueSlice()), diags
	}
	if len(types) > maxMixedTuple {
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Spec asks for too much work",
			Detail:   fmt.Sprintf("This tuple of %s values of several types is passed where a list is expected; converting more than %s of them takes time that grows with the square of their number. Make them one type (tostring, tonumber), or fewer.", thousands(len(types)), thousands(maxMixedTuple)),
			Subject:  a.Range().Ptr(),
		})
		return cty.DynamicVal, diags
	}
	return v, diags
}

// count wraps e so that its value is counted: its elements, or its
// string's bytes. The expression stays a child of a node hcl walks (a
// parenthesised expression), so that hclsyntax.Variables still finds
// the references in it.
func (bg *budget) count(e hclsyntax.Expression, bytes bool) hclsyntax.Expression {
	return &counted{Expression: &hclsyntax.ParenthesesExpr{Expression: e, SrcRange: e.Range()}, bg: bg, bytes: bytes}
}

// boundWalker collects the nodes bound wraps (after the walk, so that
// the walk sees the syntax as parsed).
type boundWalker struct {
	fors      []*hclsyntax.ForExpr
	templates []*hclsyntax.TemplateExpr
	calls     []*hclsyntax.FunctionCallExpr
}

func (w *boundWalker) Enter(n hclsyntax.Node) hcl.Diagnostics {
	switch e := n.(type) {
	case *hclsyntax.ForExpr:
		w.fors = append(w.fors, e)
	case *hclsyntax.TemplateExpr:
		w.templates = append(w.templates, e)
	case *hclsyntax.FunctionCallExpr:
		w.calls = append(w.calls, e)
	}
	return nil
}

func (w *boundWalker) Exit(hclsyntax.Node) hcl.Diagnostics { return nil }

// counted is a for expression's collection (a for expression iterates
// once per element) or a string a template interpolates (and so copies),
// counted when it is evaluated.
type counted struct {
	hclsyntax.Expression
	bg    *budget
	bytes bool
}

func (c *counted) Value(ctx *hcl.EvalContext) (cty.Value, hcl.Diagnostics) {
	if c.bg.spent.Load() {
		return cty.DynamicVal, nil
	}
	v, diags := c.Expression.Value(ctx)
	plain, _ := v.Unmark()
	if diags.HasErrors() || !plain.IsKnown() || plain.IsNull() {
		return v, diags
	}
	var why, what string
	ok := true
	switch {
	case c.bytes && plain.Type() == cty.String:
		n := len(plain.AsString())
		why, ok = c.bg.take(0, int64(n))
		what = fmt.Sprintf("Interpolating this string of %s bytes", thousands(n))
	case !c.bytes && plain.CanIterateElements():
		n := plain.LengthInt()
		why, ok = c.bg.take(int64(n), 0)
		what = fmt.Sprintf("Iterating over this collection of %s elements", thousands(n))
	}
	if ok {
		return v, diags
	}
	if why != "" {
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Spec asks for too much work",
			Detail:   fmt.Sprintf("%s would make the specs build %s. Declare fewer or smaller values, or fewer nested for expressions.", what, why),
			Subject:  c.Range().Ptr(),
		})
	}
	return cty.DynamicVal, diags
}

// checkSize reports a value the decoder evaluated that is larger than
// one load may build at all (MaxValues elements, MaxStringBytes of
// strings, at every level). Values built of the same parts, as
// [local.a, local.a], share them in memory until something walks them
// (a conversion, the plan's encoding), so their size is what counts.
func (bg *budget) checkSize(v cty.Value, at hcl.Range) hcl.Diagnostics {
	n, b := measure(v, MaxValues, MaxStringBytes)
	if n <= MaxValues && b <= MaxStringBytes {
		return nil
	}
	if bg.spent.Swap(true) {
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Value too large", Subject: at.Ptr(),
			Detail: "This value is over the limits of one load of the specs, as an earlier error says."}}
	}
	return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Value too large", Subject: at.Ptr(),
		Detail: fmt.Sprintf("This value holds more than %s values or %d MiB of strings, the limits of one load of the specs (MaxValues, MaxStringBytes). Declare fewer or smaller values.", thousands(MaxValues), MaxStringBytes>>20)}}
}

// functions are the function table with every function's result counted
// against bg, and the functions whose result can be far larger than
// their arguments (setproduct, format, replace, ...) refused
// before they run when it would be too large.
func (bg *budget) functions(table map[string]function.Function) map[string]function.Function {
	out := make(map[string]function.Function, len(table))
	for name, f := range table {
		switch name {
		case "try", "can", "convert":
			// They return what their arguments made, counted there.
			out[name] = f
			continue
		}
		out[name] = bg.bounded(name, f)
	}
	return out
}

func (bg *budget) bounded(name string, f function.Function) function.Function {
	estimate := estimates[name]
	return function.New(&function.Spec{
		Description: f.Description(),
		Params:      f.Params(),
		VarParam:    f.VarParam(),
		Type:        f.ReturnTypeForValues,
		Impl: func(args []cty.Value, ret cty.Type) (cty.Value, error) {
			if bg.spent.Load() {
				return cty.UnknownVal(ret), nil
			}
			if estimate != nil {
				if n, b := estimate(args); n > MaxValues || b > MaxStringBytes {
					bg.spent.Store(true)
					return cty.NilVal, fmt.Errorf("its result would hold about %s values and %s bytes of strings, over the limits of one load of the specs (MaxValues %s, MaxStringBytes %d MiB)",
						bigCount(n), bigCount(b), thousands(MaxValues), MaxStringBytes>>20)
				}
			}
			v, err := f.Call(args)
			if err != nil {
				return v, err
			}
			n, b := measure(v, MaxValues, MaxStringBytes)
			if why, ok := bg.take(n, b); !ok {
				if why == "" {
					return cty.UnknownVal(ret), nil
				}
				return cty.NilVal, fmt.Errorf("it makes the specs build %s", why)
			}
			return v, nil
		},
	})
}

func bigCount(n int64) string {
	if n >= math.MaxInt64/2 {
		return "more than 10^18"
	}
	return thousands(int(n))
}

// measure counts a value's elements and the bytes of its strings, at
// every level, and stops as soon as either is over its bound (so that a
// value of shared parts is never walked whole).
func measure(v cty.Value, maxN, maxB int64) (n, b int64) {
	var walk func(v cty.Value) bool
	walk = func(v cty.Value) bool {
		v, _ = v.Unmark()
		n++
		switch {
		case !v.IsKnown() || v.IsNull():
		case v.Type() == cty.String:
			b += int64(len(v.AsString()))
		case v.Type().IsSetType() && v.Type().ElementType().IsPrimitiveType():
			// A set holds each value once: none is shared, so it is no
			// larger than what made its strings, which counted them. Its
			// length alone counts here (walking a set sorts it, on every
			// walk).
			n += int64(v.LengthInt())
		case v.CanIterateElements():
			for it := v.ElementIterator(); it.Next(); {
				_, e := it.Element()
				if !walk(e) {
					return false
				}
			}
		}
		return n <= maxN && b <= maxB
	}
	walk(v)
	return n, b
}

// estimates bound, from their arguments, the size of the results of the
// functions whose result can be far larger than their arguments. Each
// returns values and bytes, clamped. (cty's range refuses more than 1,024
// values by itself.)
var estimates = map[string]func(args []cty.Value) (n, b int64){
	"setproduct": func(args []cty.Value) (int64, int64) {
		product := 1.0
		for _, a := range args {
			if a, _ = a.Unmark(); !a.IsKnown() || a.IsNull() || !a.CanIterateElements() {
				return 0, 0
			}
			product *= float64(a.LengthInt())
		}
		return clamp(product * float64(len(args))), 0
	},
	"format":     formatEstimate,
	"formatlist": formatEstimate,
	"replace": func(args []cty.Value) (int64, int64) {
		s, old, repl := str(args[0]), str(args[1]), str(args[2])
		if old == "" {
			return 1, clamp(float64(len(s)+1)*float64(len(repl)) + float64(len(s)))
		}
		return 1, clamp(float64(len(s)) + float64(strings.Count(s, old))*float64(len(repl)))
	},
	"regex_replace": func(args []cty.Value) (int64, int64) {
		s, repl := str(args[0]), str(args[2])
		return 1, clamp(float64(len(s)+1)*float64(len(repl)+1) + float64(len(s)))
	},
	"indent": func(args []cty.Value) (int64, int64) {
		s := str(args[1])
		return 1, clamp(float64(len(s)) + number(args[0])*float64(strings.Count(s, "\n")+1))
	},
}

// formatVerb finds the widths and precisions of format verbs.
var formatVerb = regexp.MustCompile(`%[-+# 0]*(\d*)(?:\.(\d*))?`)

// formatEstimate bounds a format's result by the widths and precisions
// its verbs ask for, times the elements of formatlist's lists.
func formatEstimate(args []cty.Value) (int64, int64) {
	if len(args) == 0 {
		return 0, 0
	}
	f := str(args[0])
	padding := float64(len(f))
	for _, m := range formatVerb.FindAllStringSubmatch(f, -1) {
		for _, digits := range m[1:] {
			if w, err := strconv.ParseFloat(digits, 64); err == nil {
				padding += w
			}
		}
	}
	times := 1.0
	for _, a := range args[1:] {
		if a, _ = a.Unmark(); a.IsKnown() && !a.IsNull() && a.CanIterateElements() {
			times = max(times, float64(a.LengthInt()))
		}
	}
	return clamp(times), clamp(padding * times)
}

func str(v cty.Value) string {
	if v, _ = v.Unmark(); v.IsKnown() && !v.IsNull() && v.Type() == cty.String {
		return v.AsString()
	}
	return ""
}

func number(v cty.Value) float64 {
	if v, _ = v.Unmark(); v.IsKnown() && !v.IsNull() && v.Type() == cty.Number {
		f, _ := v.AsBigFloat().Float64()
		return f
	}
	return 0
}

func clamp(f float64) int64 {
	if f != f || f >= math.MaxInt64/2 {
		return math.MaxInt64 / 2
	}
	if f < 0 {
		return 0
	}
	return int64(f)
}

// tooDeep finds, in one file's tokens, the first place where
// expressions nest deeper than MaxDepth: brackets, braces, parentheses
// and interpolations, with the conditionals (a ? b : c ? ...) and the
// "!" chained inside them. hcl's parser recurses once per level (and
// several frames deep), so a file of a hundred thousand "[" overflows the
// stack and kills the process before any diagnostic, and a hundred
// thousand "!" take seconds: the depth is checked before hcl parses.
// It also bounds the operators one expression chains and the lines of a
// heredoc.
//
// Lexing a file costs what hcl's own parse of it costs, so the bytes are
// read first (nestingOf): a file they show within the limits is not
// lexed twice, and one that holds a comment or a heredoc that never ends
// is refused without lexing it at all (hcl's scanner reads to the end of
// the file from each such opener: 200 KB of "/*" lines take it minutes).
// Any other file is judged on its tokens, which also say where it
// crosses a limit.
func tooDeep(src []byte, path string) *hcl.Diagnostic {
	v, at, _ := nestingOf(src, specLimits, 0, nil)
	return judge(src, path, v, at)
}

// judge is tooDeep once the bytes have said v (and, of an endless file,
// where: at).
func judge(src []byte, path string, v verdict, at int) *hcl.Diagnostic {
	switch v {
	case within:
		return nil
	case endless:
		return endlessDiagnostic(src, path, at)
	}
	return tokenNesting(src, path, hcl.InitialPos, specLimits)
}

// endlessDiagnostic is the error of the comment or heredoc that opens at
// src[at] and never ends.
func endlessDiagnostic(src []byte, path string, at int) *hcl.Diagnostic {
	pos := hcl.Pos{Line: 1 + bytes.Count(src[:at], []byte("\n")), Byte: at}
	pos.Column = 1 + utf8.RuneCount(src[at-(at-bytes.LastIndexByte(src[:at], '\n')-1):at])
	end := hcl.Pos{Line: pos.Line, Column: pos.Column + 2, Byte: at + 2}
	d := &hcl.Diagnostic{Severity: hcl.DiagError, Subject: &hcl.Range{Filename: path, Start: pos, End: end}, Extra: unparsed{}}
	if bytes.HasPrefix(src[at:], []byte("/*")) {
		d.Summary, d.Detail = "Unterminated comment", "This comment is opened with \"/*\" and never closed with \"*/\", so the rest of the file cannot be read. Close it, or use \"#\" for a comment of one line."
	} else {
		d.Summary, d.Detail = "Unterminated template string", "No closing marker was found for this heredoc: a line that holds only its marker must end it."
	}
	return d
}

// limits are the bounds tooDeep holds a file to: the package's own
// (specLimits), or small ones in the test that holds the byte scan to the
// token scan.
type limits struct{ depth, operators, heredocLines int }

var specLimits = limits{MaxDepth, MaxOperators, MaxHeredocLines}

// tokenNesting is tooDeep on the file's tokens.
func tokenNesting(src []byte, path string, start hcl.Pos, lim limits) *hcl.Diagnostic {
	tokens, _ := hclsyntax.LexConfig(src, path, start)
	refuse := func(t hclsyntax.Token, summary, format string, args ...any) *hcl.Diagnostic {
		return &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: fmt.Sprintf(format, args...), Subject: t.Range.Ptr(), Extra: unparsed{}}
	}
	// chained[i] are the conditionals and "!" pending at bracket level i,
	// until the expression there ends (a comma, or a newline outside
	// brackets); operators, the operators since then.
	chained := []int{0}
	// braced[i] is true when level i was opened by a brace (a block or an
	// object), where a newline ends an item, as at the top.
	braced := []bool{true}
	total, operators := 0, 0
	heredoc := -1 // the lines of the heredoc the tokens are in; -1 outside one
	for _, t := range tokens {
		level := len(chained) - 1
		switch t.Type {
		case hclsyntax.TokenOHeredoc:
			heredoc = 0
		case hclsyntax.TokenCHeredoc:
			heredoc = -1
		case hclsyntax.TokenStringLit:
			if heredoc < 0 {
				break
			}
			if heredoc++; heredoc > lim.heredocLines {
				return refuse(t, "Heredoc too long", "A heredoc may hold %s lines (MaxHeredocLines); this one holds more. Keep such data in a smaller piece, or out of the specs.", thousands(lim.heredocLines))
			}
		case hclsyntax.TokenPlus, hclsyntax.TokenMinus, hclsyntax.TokenStar, hclsyntax.TokenSlash, hclsyntax.TokenPercent,
			hclsyntax.TokenAnd, hclsyntax.TokenOr, hclsyntax.TokenEqualOp, hclsyntax.TokenNotEqual,
			hclsyntax.TokenLessThan, hclsyntax.TokenLessThanEq, hclsyntax.TokenGreaterThan, hclsyntax.TokenGreaterThanEq:
			if operators++; operators > lim.operators {
				return refuse(t, "Expression too long", "One expression may chain %s operators (MaxOperators); this one chains more. Split it into locals.", thousands(lim.operators))
			}
		case hclsyntax.TokenOBrace, hclsyntax.TokenOBrack, hclsyntax.TokenOParen, hclsyntax.TokenTemplateInterp, hclsyntax.TokenTemplateControl:
			chained = append(chained, 0)
			braced = append(braced, t.Type == hclsyntax.TokenOBrace)
			total++
		case hclsyntax.TokenCBrace, hclsyntax.TokenCBrack, hclsyntax.TokenCParen, hclsyntax.TokenTemplateSeqEnd:
			if level > 0 {
				total -= chained[level] + 1
				chained, braced = chained[:level], braced[:level]
			}
		case hclsyntax.TokenQuestion, hclsyntax.TokenBang:
			chained[level]++
			total++
		case hclsyntax.TokenNewline, hclsyntax.TokenComma, hclsyntax.TokenComment:
			// A newline (a line comment holds its own) ends an expression
			// at the top and inside braces, not inside brackets and
			// parentheses, where hcl reads on.
			if t.Type == hclsyntax.TokenComma || braced[level] {
				total -= chained[level]
				chained[level] = 0
				operators = 0
			}
		}
		if total > lim.depth {
			return refuse(t, "Expression nested too deeply", "Expressions may nest %d deep (MaxDepth: brackets, braces, parentheses, interpolations, conditionals and \"!\" inside one another); here they nest deeper. Name a part of the expression in a local.", lim.depth)
		}
	}
	return nil
}

// verdict is what the bytes of a file say of its nesting.
type verdict int

const (
	// unsure: the bytes hold what only the tokens tell for sure (a
	// heredoc, a newline inside a quoted string, brackets that do not
	// match, an unterminated string, a byte outside ASCII where it is
	// not inside a string or a comment).
	unsure verdict = iota
	// within: the file is within the limits, as tokenNesting would find.
	within
	// beyond: the file crosses a limit (tokenNesting says where).
	beyond
	// endless: a comment or a heredoc opens and never ends, which hcl's
	// scanner takes time that grows with the square of the file's size
	// to find out.
	endless
)

// nestingOf reads src as hcl's scanner would (code, quoted strings and
// the interpolations and directives inside them, comments, heredocs) and
// counts what tokenNesting counts on the tokens, with the same resets:
// the levels opened, the conditionals and "!" chained at each, and the
// operators since the expression began. It may count more operators
// than there are tokens ("-" inside a name, "e-5" inside a number), never
// fewer, so within is only said of a file the tokens pass too; FuzzNesting
// holds it to tokenNesting at small limits.
//
// Once the bytes are not enough (unsure), it reads on for a comment or a
// heredoc that never ends, and says where that one opens (endless, at).
//
// With every > 0, it also gives the places to cut a file it finds within
// the limits into pieces of about every bytes each: after a newline at
// the top level, where the next item begins. With first not nil, it
// tells first the name each top-level item begins with (a block's type,
// an argument's name) and the piece it is in: what the item is, before
// anything parses it.
func nestingOf(src []byte, lim limits, every int, first func(piece int, name []byte)) (v verdict, at int, cuts []int) {
	type level struct {
		opener  byte // '{', '[', '(', or '$' for an interpolation or directive
		chained int
	}
	levels := []level{{opener: '{'}}
	total, operators := 0, 0
	inString := false
	v = within
	last := 0    // the last cut
	item := true // at the top level, before the next item's first name
	// count holds the file to the limits while the bytes are enough: ok
	// is whether it is still within them.
	count := func(ok bool) {
		if !ok && v == within {
			v = beyond
		}
	}
	open := func(opener byte) {
		levels = append(levels, level{opener: opener})
		total++
		count(total <= lim.depth)
	}
	chain := func() {
		levels[len(levels)-1].chained++
		total++
		count(total <= lim.depth)
	}
	operator := func() {
		operators++
		count(operators <= lim.operators)
	}
	// shut ends the innermost level, which opener must have opened.
	shut := func(opener byte) bool {
		top := levels[len(levels)-1]
		if len(levels) == 1 || top.opener != opener {
			return false
		}
		total -= top.chained + 1
		levels = levels[:len(levels)-1]
		return true
	}
	// end ends an expression: a comma, or a newline or a comment where a
	// newline ends an item (at the top and inside braces).
	end := func(comma bool) {
		if top := &levels[len(levels)-1]; comma || top.opener == '{' {
			total -= top.chained
			top.chained = 0
			operators = 0
		}
	}
	doubt := func() {
		if v == within {
			v = unsure
		}
	}
	for i := 0; i < len(src); i++ {
		c := src[i]
		next := byte(0)
		if i+1 < len(src) {
			next = src[i+1]
		}
		if inString {
			switch c {
			case '"':
				inString = false
			case '\\':
				if next == 0 || next == '\n' || next == '\r' {
					doubt()
				}
				i++
			case '$', '%':
				switch {
				case next == '{':
					open('$')
					inString = false
					i++
				case next == c && i+2 < len(src) && src[i+2] == '{':
					i += 2 // $${ and %%{ are literal
				}
			case '\n', '\r':
				doubt()
				inString = false // hcl ends the string there too
			}
			continue
		}
		if item && len(levels) == 1 && c != ' ' && c != '\t' && c != '\r' && c != '\n' && c != '#' && c != '/' {
			item = false
			if first != nil && isNameStart(c) {
				j := i + 1
				for j < len(src) && isNameByte(src[j]) {
					j++
				}
				first(len(cuts), src[i:j])
			}
		}
		switch c {
		case '"':
			inString = true
		case '\n':
			end(false)
			item = item || len(levels) == 1
			if every > 0 && len(levels) == 1 && i+1-last >= every && i+1 < len(src) {
				last = i + 1
				cuts = append(cuts, last)
			}
		case ',':
			end(true)
		case '#':
			i = lineEnd(src, i)
			end(false)
			item = item || len(levels) == 1
		case '/':
			switch next {
			case '/':
				i = lineEnd(src, i)
				end(false)
				item = item || len(levels) == 1
			case '*':
				closing := bytes.Index(src[i+2:], []byte("*/"))
				if closing < 0 {
					return endless, i, nil
				}
				i += 2 + closing + 1
				end(false)
			default:
				operator()
			}
		case '{', '[', '(':
			open(c)
		case '}':
			interpolation := levels[len(levels)-1].opener == '$'
			if !shut('{') && !shut('$') {
				doubt()
			}
			inString = interpolation
		case ']':
			if !shut('[') {
				doubt()
			}
		case ')':
			if !shut('(') {
				doubt()
			}
		case '~':
			if next == '}' {
				if !shut('$') {
					doubt()
				}
				inString = true
				i++
			}
		case '?', '!':
			if c == '!' && next == '=' {
				operator()
				i++
			} else {
				chain()
			}
		case '<':
			if next == '<' {
				// A heredoc (the tokens count what it holds), or two "<".
				doubt()
				if end, ok := heredocEnd(src, i); !ok {
					return endless, i, nil
				} else if end > i {
					i = end
				}
				continue
			}
			fallthrough
		case '>':
			if next == '=' {
				i++
			}
			operator()
		case '=':
			switch next {
			case '=':
				operator()
				i++
			case '>':
				i++
			}
		case '&', '|':
			if next == c {
				operator()
				i++
			}
		case '+', '-', '*', '%':
			operator()
		default:
			if c >= 0x80 {
				// hcl's scanner reads a name from the Unicode tables,
				// which take a byte of a broken sequence with up to three
				// bytes after it, whatever they are.
				doubt()
			} else if isNameStart(c) {
				for i+1 < len(src) && isNameByte(src[i+1]) {
					i++
				}
			}
		}
	}
	if inString || len(levels) > 1 {
		doubt()
	}
	if v != within {
		cuts = nil
	}
	return v, 0, cuts
}

// heredocEnd reads the heredoc that may open at src[i] ("<<" or "<<-",
// a marker, a newline): the end of the line that closes it, or i when
// src[i:] does not open one; false when no line closes it.
func heredocEnd(src []byte, i int) (int, bool) {
	j := i + 2
	if j < len(src) && src[j] == '-' {
		j++
	}
	k := j
	for k < len(src) && isNameByte(src[k]) {
		k++
	}
	if k == j || !isNameStart(src[j]) {
		return i, true
	}
	marker := src[j:k]
	if k < len(src) && src[k] == '\r' {
		k++
	}
	if k >= len(src) || src[k] != '\n' {
		return i, true
	}
	for line := k + 1; line < len(src); {
		stop := lineEnd(src, line)
		if bytes.Equal(bytes.Trim(src[line:stop], " \t\r"), marker) {
			return stop, true
		}
		line = stop + 1
	}
	return 0, false
}

// isNameStart: c begins a name (hcl's identifiers are Unicode's, and the
// scan leaves any byte outside ASCII to the tokens).
func isNameStart(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' }

// isNameByte: c continues a name.
func isNameByte(c byte) bool { return isNameStart(c) || c == '-' || c >= '0' && c <= '9' }

// lineEnd is where the line comment that starts at i ends: at its
// newline, which it holds, or at the end of src.
func lineEnd(src []byte, i int) int {
	if nl := bytes.IndexByte(src[i:], '\n'); nl >= 0 {
		return i + nl
	}
	return len(src)
}

// unparsed marks the diagnostic of a file that was not parsed at all, so
// that what it may have declared (the project) is not reported missing.
type unparsed struct{}
