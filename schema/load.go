package schema

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	hcljson "github.com/hashicorp/hcl/v2/json"
	"github.com/provision-dev/provision/provision/addrs"
	"github.com/zclconf/go-cty/cty"
)

// Parser reads spec files and keeps their sources, so that diagnostics can
// be printed with snippets.
type Parser struct {
	p    *hclparse.Parser
	lang *Language
}

// NewParser returns a Parser of specs in lang, with no files read yet.
func NewParser(lang *Language) *Parser { return &Parser{p: hclparse.NewParser(), lang: lang} }

// Files are the sources read so far, by file name, for
// hcl.NewDiagnosticTextWriter.
func (p *Parser) Files() map[string]*hcl.File { return p.p.Files() }

// ParseHCLFile parses a file of another language than the specs' that is
// written in HCL's native syntax (a policy file), keeping its source for
// the diagnostics' snippets as the specs' are kept.
func (p *Parser) ParseHCLFile(path string) (*hcl.File, hcl.Diagnostics) {
	return p.p.ParseHCLFile(path)
}

// SpecFiles lists the spec files of dir: every *.hcl file but the
// policy files (*.policy.hcl), sorted. A path that is a file is its own
// list.
func SpecFiles(dir string) ([]string, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if st.Mode().IsRegular() {
		return []string{dir}, nil
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.hcl"))
	if err != nil {
		return nil, err
	}
	// A policy file is -policies' to read, wherever it is kept.
	files = slices.DeleteFunc(files, func(f string) bool { return strings.HasSuffix(f, ".policy.hcl") })
	sort.Strings(files)
	return files, nil
}

// fileSchema is the top level of a spec file: the blocks the loader
// decodes itself, and those of the language's kinds and places.
func (l *Language) fileSchema() *hcl.BodySchema {
	s := &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "project"}}, Blocks: slices.Clone(loaderBlocks)}
	for _, k := range l.kinds {
		s.Blocks = append(s.Blocks, hcl.BlockHeaderSchema{Type: k.Name(), LabelNames: k.Labels})
	}
	for _, typ := range l.placeTypes {
		h := hcl.BlockHeaderSchema{Type: typ}
		if label := l.places[typ].Label; label != "" {
			h.LabelNames = []string{label}
		}
		s.Blocks = append(s.Blocks, h)
	}
	return s
}

// fileContent is the top level of one spec file, read with top (its
// fileSchema). A place that may be written with or without a label
// (PlaceSchema.Unlabelled: consul { } and consul "dc2" { }) is read a
// second time without its label, and the first read's refusal of such a
// block for its missing label dropped.
func (l *Language) fileContent(body hcl.Body, top *hcl.BodySchema) (*hcl.BodyContent, hcl.Diagnostics) {
	c, diags := body.Content(top)
	bare := &hcl.BodySchema{}
	missing := map[string]bool{}
	for _, h := range top.Blocks {
		if s := l.places[h.Type]; s != nil && s.Unlabelled {
			bare.Blocks = append(bare.Blocks, hcl.BlockHeaderSchema{Type: h.Type})
			missing[fmt.Sprintf("Missing %s for %s", s.Label, h.Type)] = true
		}
	}
	if len(bare.Blocks) == 0 {
		return c, diags
	}
	unlabelled, _, _ := body.PartialContent(bare)
	c.Blocks = append(c.Blocks, unlabelled.Blocks...)
	return c, slices.DeleteFunc(diags, func(d *hcl.Diagnostic) bool { return missing[d.Summary] })
}

var loaderBlocks = []hcl.BlockHeaderSchema{
	{Type: "variable", LabelNames: []string{"name"}},
	{Type: "locals"},
	{Type: "import"},
	{Type: "removed"},
	{Type: "module", LabelNames: []string{"name"}},
	{Type: "output", LabelNames: []string{"name"}},
}

var projectName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)

// varFile reads and parses a variable file, confined as a spec file is
// (ReadConfined). Its text is kept from the diagnostics' snippets: a
// variable file holds values, sensitive ones among them, and no
// diagnostic quotes it.
func (p *Parser) varFile(path string) (*hcl.File, hcl.Diagnostics) {
	src, err := ReadConfined(path, filepath.Dir(path))
	if err != nil {
		return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Variable file refused", Detail: fmt.Sprintf("The variable file %s.", err)}}
	}
	parse := func() (*hcl.File, hcl.Diagnostics) { return hclsyntax.ParseConfig(src, path, hcl.InitialPos) }
	if strings.HasSuffix(path, ".json") { // Terraform's .tfvars.json: one JSON object
		parse = func() (*hcl.File, hcl.Diagnostics) { return hcljson.Parse(src, path) }
	}
	f, diags := parse()
	p.p.AddFile(path, &hcl.File{Body: hcl.EmptyBody()})
	return f, diags
}

// AutoVarFiles are the variable files of dir read with no -var-file, as
// Terraform reads terraform.tfvars and *.auto.tfvars: provision.tfvars,
// provision.tfvars.json, then *.auto.tfvars and *.auto.tfvars.json in
// lexical order. A -var-file or -var given after them wins, and each wins
// over the environment's PROVISION_VAR_<name>.
func AutoVarFiles(dir string) []string {
	var out []string
	for _, name := range []string{"provision.tfvars", "provision.tfvars.json"} {
		if st, err := os.Stat(filepath.Join(dir, name)); err == nil && !st.IsDir() {
			out = append(out, filepath.Join(dir, name))
		}
	}
	var auto []string
	for _, pattern := range []string{"*.auto.tfvars", "*.auto.tfvars.json"} {
		found, _ := filepath.Glob(filepath.Join(dir, pattern))
		auto = append(auto, found...)
	}
	sort.Strings(auto)
	return append(out, auto...)
}

// LoadDir reads every spec file of dir and decodes them into one Config.
// It reports every problem of every file in one go; the Config is only
// meaningful when the diagnostics hold no error.
func (p *Parser) LoadDir(dir string, in Inputs) (*Config, hcl.Diagnostics) {
	paths, err := SpecFiles(dir)
	if err != nil || len(paths) == 0 {
		detail := fmt.Sprintf("The directory %q holds no *.hcl spec files.", dir)
		if err != nil {
			detail = err.Error()
		}
		if _, serr := os.Stat(dir); serr != nil {
			detail = fmt.Sprintf("The directory %q cannot be read: %s.", dir, serr)
		}
		return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "No spec files", Detail: detail}}
	}
	if st, err := os.Stat(dir); err == nil && st.IsDir() {
		in.VarFiles = append(AutoVarFiles(dir), in.VarFiles...)
	}
	return p.LoadFiles(paths, in)
}

// LoadFiles is LoadDir for a given list of files, read in that order. It
// reads and parses them, decodes their top level (the project, the
// variables, the locals and the blocks that say where the live systems
// are), then every object, then checks the whole. It does no I/O but
// reading the files and the variable files.
func (p *Parser) LoadFiles(paths []string, in Inputs) (*Config, hcl.Diagnostics) {
	if cfg, diags, ok := p.load(paths, in, p.lang.laterClasses()); ok {
		return cfg, diags
	}
	// A piece parsed with its blocks did not parse: the files again,
	// every piece at once, for hcl's own diagnostics.
	cfg, diags, _ := p.load(paths, in, nil)
	return cfg, diags
}

// laterClasses is the class of the pieces that hold only blocks of the
// type named (parseFiles): each object kind's, early or not, but for a
// kind whose blocks name one another.
func (l *Language) laterClasses() func(name []byte) class {
	classes := map[string]class{}
	for _, k := range l.kinds {
		switch {
		case k.named():
		case k.Early:
			classes[k.Name()] = earlyObjects
		default:
			classes[k.Name()] = lateObjects
		}
	}
	return func(name []byte) class { return classes[string(name)] }
}

// load is LoadFiles, the pieces of a large file parsed when their blocks
// are decoded when later is not nil (parseFiles); ok is false when one
// of them did not parse.
func (p *Parser) load(paths []string, in Inputs, later func(name []byte) class) (_ *Config, _ hcl.Diagnostics, ok bool) {
	bodies, pieces, diags := p.parseFiles(paths, later)
	if diags.HasErrors() {
		// Nothing is decoded from specs that do not parse: every error
		// it would find (an attribute of a string, a reference to what
		// the broken file declares) follows from the syntax error. The
		// variable files' own syntax errors do not, and are said too.
		var vdiags hcl.Diagnostics
		for _, path := range in.VarFiles {
			_, fdiags := p.varFile(path)
			vdiags = append(vdiags, firstCause(fdiags)...)
		}
		return NewConfig(p.lang), append(vdiags, diags...), true
	}
	bg := &budget{}
	var contents []*hcl.BodyContent
	top := p.lang.fileSchema()
	for _, body := range bodies {
		bg.bound(body)
		c, cdiags := p.lang.fileContent(body, top)
		diags = append(diags, cdiags...)
		contents = append(contents, c)
	}

	cfg := NewConfig(p.lang)
	var localsBlocks []*hcl.Block
	for _, c := range contents {
		localsBlocks = append(localsBlocks, c.Blocks.OfType("locals")...)
		for _, b := range c.Blocks.OfType("variable") {
			v, vdiags := decodeVariableBlock(b)
			diags = append(diags, vdiags...)
			if prev, dup := cfg.Variables[v.Name]; dup {
				diags = append(diags, duplicate("Duplicate variable block", fmt.Sprintf("variable %q", v.Name), b.LabelRanges[0], prev.DeclRange))
				continue
			}
			cfg.Variables[v.Name] = v
		}
	}
	diags = append(diags, assignValues(cfg.Variables, in, p.varFile)...)
	// A -var's value is the source its diagnostics quote ("on <-var
	// api_port> line 1"), but a sensitive variable's, which nothing shows.
	for _, kv := range in.Vars {
		if name, val, ok := strings.Cut(kv, "="); ok {
			if v := cfg.Variables[strings.TrimSpace(name)]; v != nil && !v.Sensitive {
				p.p.AddFile(inputRange("-var "+name).Filename, &hcl.File{Body: hcl.EmptyBody(), Bytes: []byte(val)})
			}
		}
	}
	files, err := newSpecFiles(filepath.Dir(paths[0]), in.Env, bg)
	if err != nil {
		diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid root", Detail: upper(err.Error()) + "."})
	}
	functions := files.functions(Functions)
	diags = append(diags, validate(cfg.Variables, functions)...)
	var ldiags hcl.Diagnostics
	cfg.Locals, ldiags = decodeLocals(localsBlocks)
	diags = append(diags, ldiags...)
	d := &decoder{lang: p.lang, ctx: evalContext(cfg.Variables, functions), vars: cfg.Variables, locals: cfg.Locals, bg: bg, alike: &alike{},
		parser: p, files: files, modules: map[string]*moduleFiles{}, functions: functions, later: pieces, order: map[string]int{}}
	for i, path := range paths {
		d.order[path] = i
	}
	calls := d.moduleCalls(contents)
	early, late := lateLocals(cfg.Locals, calls)
	d.evalLocals(early)

	imports, removed := d.topLevel(cfg, contents)
	d.ctx.Variables["module"] = d.evalInOrder(cfg, contents, calls, early, late, call{dir: "."})
	if d.unparsed {
		return nil, nil, false
	}
	cfg.Scope = d.ctx
	for _, o := range d.outputs(contents) {
		o.Value, _ = o.Value.UnmarkDeep()
		if o.Sensitive && o.Value.IsWhollyKnown() {
			d.secrets = append(d.secrets, stringLeaves(o.Value)...)
		}
		cfg.Outputs = append(cfg.Outputs, o)
	}

	if cfg.ProjectRange.Filename == "" && !slices.ContainsFunc(diags, func(d *hcl.Diagnostic) bool { _, ok := d.Extra.(unparsed); return ok }) {
		d.diags = append(d.diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Missing project",
			Detail:   "One spec file must set project = \"<name>\": the owner written on everything provision creates, so that it only ever changes or deletes its own objects.",
			Subject:  &hcl.Range{Filename: paths[0], Start: hcl.InitialPos, End: hcl.InitialPos},
		})
	}
	d.latePlaces(cfg)
	d.checkPlaces(cfg)
	for _, v := range sortedVariables(cfg.Variables) {
		if v.Sensitive && v.Value != cty.NilVal {
			d.secrets = append(d.secrets, stringLeaves(v.Value)...)
		}
	}
	cfg.Secrets = d.secrets // every secret is known: no check evaluates
	for _, k := range p.lang.kinds {
		k.check(d, cfg)
	}
	d.checkImports(cfg, imports, in.GenerateConfig)
	d.checkRemoved(cfg, removed)
	diags = append(diags, d.diags...)
	diags = append(diags, bg.unreported(diags, cfg.ProjectRange)...)
	diags = distinct(diags)
	files.unquoted(diags)
	sortDiagnostics(diags)
	return cfg, diags, true
}

// distinct drops a diagnostic that says what one before it said, at the
// same place: each instance of a module call (and each call made again
// for the outputs other calls read) checks the module's blocks, and the
// reader, a text or a JSON view, needs each diagnostic once.
func distinct(diags hcl.Diagnostics) hcl.Diagnostics {
	type said struct {
		severity        hcl.DiagnosticSeverity
		summary, detail string
		subject         hcl.Range
	}
	seen := make(map[said]bool, len(diags))
	out := diags[:0:0]
	for _, d := range diags {
		k := said{d.Severity, d.Summary, d.Detail, hcl.Range{}}
		if d.Subject != nil {
			k.subject = *d.Subject
		}
		if !seen[k] {
			seen[k] = true
			out = append(out, d)
		}
	}
	return out
}

// topLevel decodes the project attribute and the blocks of contents but
// the variables, the locals and the kinds' blocks (Kinds), the places'
// last (placeBlocks), once the project is known; it returns the import
// and removed blocks, checked once every object is decoded.
func (d *decoder) topLevel(cfg *Config, contents []*hcl.BodyContent) (imports []*Import, removed []*Removed) {
	placeBlocks := map[string][]*hcl.Block{}
	for _, c := range contents {
		if attr, ok := c.Attributes["project"]; ok {
			if cfg.ProjectRange.Filename != "" {
				d.diags = append(d.diags, duplicate("Duplicate project attribute", "project", attr.NameRange, cfg.ProjectRange))
			} else {
				cfg.Project, cfg.ProjectRange = d.str(attr), attr.Range
				if cfg.Project != "" && !projectName.MatchString(cfg.Project) {
					d.errorf(attr.Expr.Range(), attr.Range, "Invalid project name",
						"The project name %q is written on Consul meta and index _meta and names the lock; use 1 to 63 lowercase letters, digits, \"-\" or \"_\", starting with a letter or digit.", cfg.Project)
				}
			}
		}
		for _, b := range c.Blocks {
			switch b.Type {
			case "import":
				imports = append(imports, d.importBlocks(b)...)
			case "removed":
				removed = append(removed, d.removedBlocks(b)...)
			default:
				if d.lang.places[b.Type] != nil {
					placeBlocks[b.Type] = append(placeBlocks[b.Type], b)
				}
			}
		}
	}
	d.placeBlocks(cfg, placeBlocks)
	return imports, removed
}

// sortDiagnostics orders diagnostics by file and position, so that they
// read top to bottom whatever order the decoder found them in.
func sortDiagnostics(diags hcl.Diagnostics) {
	sort.SliceStable(diags, func(i, j int) bool {
		a, b := diags[i].Subject, diags[j].Subject
		switch {
		case a == nil || b == nil:
			return a == nil && b != nil
		case a.Filename != b.Filename:
			return a.Filename < b.Filename
		}
		return a.Start.Byte < b.Start.Byte
	})
}

// duplicate is the diagnostic for a second declaration of something that
// may be declared once; what names it in the detail ("service ID \"api\"").
func duplicate(summary, what string, at, prev hcl.Range) *hcl.Diagnostic {
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  summary,
		Detail:   fmt.Sprintf("The %s was already declared at %s. Each may be declared only once across all spec files; remove or rename one of them.", what, prev),
		Subject:  at.Ptr(),
	}
}

// duplicateIn is duplicate for objects that modules may declare: it names
// the module instances that declare the same live object.
func duplicateIn(summary, what string, at, prev hcl.Range, module, prevModule addrs.Module) *hcl.Diagnostic {
	if module == addrs.Root && prevModule == addrs.Root {
		return duplicate(summary, what, at, prev)
	}
	by := func(m addrs.Module) string { return cmp.Or(m.String(), "the root specs") }
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  summary,
		Detail: fmt.Sprintf("The %s is declared by %s (here) and by %s (at %s): two declarations of one live object. Give each instance its own, from the module's inputs (an id, a name, a path).",
			what, by(module), by(prevModule), prev),
		Subject: at.Ptr(),
	}
}
