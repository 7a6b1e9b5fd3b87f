package cli

import (
	"bufio"
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/provision/run"
	"github.com/zclconf/go-cty/cty"
)

// consoleArgs are console's.
type consoleArgs struct{ vars varArgs }

func (a *consoleArgs) register(fs flags) { a.vars.register(fs) }

// console evaluates expressions read from stdin, one a line, in the root
// specs' scope (var, local, module, path and the functions), as
// terraform console does; reads no server. An expression that fails is
// a diagnostic at its line and column (in <stdin>), and the command then
// exits 1.
func (c *cli) console(args []string) int {
	var a consoleArgs
	pos, code, ok := c.args("console", &a, args, 1, nil)
	if !ok {
		return code
	}
	v := c.textView(false)
	specs, diags := run.LoadSpecs(c.Language, dirArg(pos), a.vars.vars, a.vars.files, a.vars.environ(c.environ)())
	if diags.HasErrors() || specs.Config == nil {
		v.Loaded(specs.Parser.Files(), nil)
		v.Diagnostics(diags)
		return exitError
	}
	v.Loaded(specs.Parser.Files(), specs.Config.Secrets)
	interactive := c.isTerminal(c.stdin)
	var read []byte // the input so far: the source diagnostics quote
	failed := false
	sc := bufio.NewScanner(c.stdin)
	for line, offset := 1, 0; ; line++ {
		if interactive {
			fmt.Fprint(c.stdout, "> ")
		}
		if !sc.Scan() {
			break
		}
		text := sc.Text()
		read = append(append(read, text...), '\n')
		start := hcl.Pos{Line: line, Column: 1, Byte: offset}
		offset = len(read)
		if strings.TrimSpace(text) == "" {
			continue
		}
		if strings.TrimSpace(text) == "exit" {
			break
		}
		expr, diags := hclsyntax.ParseExpression([]byte(text), "<stdin>", start)
		var val cty.Value
		if !diags.HasErrors() {
			diags = undeclared(expr, specs.Config.Scope)
		}
		if !diags.HasErrors() {
			val, diags = expr.Value(specs.Config.Scope)
		}
		if diags.HasErrors() {
			failed = true
			v.files["<stdin>"] = &hcl.File{Bytes: read}
			v.Diagnostics(diags)
			continue
		}
		fmt.Fprintln(c.stdout, plans.HideSecrets(consoleValue(val), v.o.secrets))
	}
	if failed {
		return exitError
	}
	return exitOK
}

// consoleValue is v as HCL writes it; a sensitive value is
// (sensitive value), one not known before an apply (known after apply).
func consoleValue(v cty.Value) string {
	switch {
	case v.HasMark("sensitive") || v.ContainsMarked():
		return "(sensitive value)"
	case !v.IsWhollyKnown():
		return "(known after apply)"
	}
	return string(hclwrite.TokensForValue(v).Bytes())
}

// undeclared reports each reference of expr to a name the specs do not
// declare (var.<name>, local.<name>, module.<name>, ...), as Terraform
// does before it evaluates: try and can catch a failed evaluation, never
// a name that does not exist.
func undeclared(expr hcl.Expression, scope *hcl.EvalContext) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, tr := range expr.Variables() {
		if len(tr) > 2 {
			tr = tr[:2]
		}
		if _, d := tr.TraverseAbs(scope); d.HasErrors() {
			diags = append(diags, d...)
		}
	}
	return diags
}
