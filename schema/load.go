package schema

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/zclconf/go-cty/cty"
)

// Parser reads spec files and keeps their sources, so that diagnostics can
// be printed with snippets.
type Parser struct {
	p *hclparse.Parser
}

// NewParser returns a Parser with no files read yet.
func NewParser() *Parser { return &Parser{p: hclparse.NewParser()} }

// Files are the sources read so far, by file name, for
// hcl.NewDiagnosticTextWriter.
func (p *Parser) Files() map[string]*hcl.File { return p.p.Files() }

// SpecFiles lists the spec files of dir: every *.hcl file, sorted. A path
// that is a file is its own list.
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
	sort.Strings(files)
	return files, nil
}

// fileSchema is the top level of a spec file: the blocks the loader
// decodes itself, and those of the kinds that decode their own (Kinds).
var fileSchema = func() *hcl.BodySchema {
	s := &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "project"}}, Blocks: loaderBlocks}
	for _, k := range Kinds {
		if k.decode != nil {
			s.Blocks = append(s.Blocks, hcl.BlockHeaderSchema{Type: k.Name, LabelNames: k.labels})
		}
	}
	return s
}()

var loaderBlocks = []hcl.BlockHeaderSchema{
	{Type: "proxy"},
	{Type: "consul"},
	{Type: "agent", LabelNames: []string{"name"}},
	{Type: "variable", LabelNames: []string{"name"}},
	{Type: "locals"},
	{Type: "service", LabelNames: []string{"name"}},
	{Type: "search", LabelNames: []string{"name"}},
	{Type: "index", LabelNames: []string{"name"}},
	{Type: "import"},
	{Type: "traefik", LabelNames: []string{"name"}},
	{Type: "document", LabelNames: []string{"type", "name"}},
}

var projectName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)

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
	return p.LoadFiles(paths, in)
}

// LoadFiles is LoadDir for a given list of files, read in that order.
//
// With in.Connected set, the pieces that may hold more than services,
// indices and documents (each file's head, usually) are parsed first,
// and what they say of where the live systems are is handed over while
// the others are still parsing: a plan's read of its agents starts that
// much earlier.
func (p *Parser) LoadFiles(paths []string, in Inputs) (*Config, hcl.Diagnostics) {
	files, pieces, diags := readFiles(paths)
	var order []*piece // the n heads, then the rest
	for _, pc := range pieces {
		if pc.head {
			order = append(order, pc)
		}
	}
	n := len(order)
	for _, pc := range pieces {
		if !pc.head {
			order = append(order, pc)
		}
	}
	heads, all := parseAll(order, n)
	if in.Connected != nil && n < len(order) {
		heads()
		if !slices.ContainsFunc(order[:n], func(pc *piece) bool { return pc.diags.HasErrors() }) {
			if cfg, ldiags, ok := p.loadStaged(paths, files, pieces, all, diags, in); ok {
				return cfg, ldiags
			}
			// The later pieces do not parse, or hold more than the bytes
			// said: the load starts over on fresh syntax trees (the
			// limits are already set on the first ones).
			in.Connected = nil
			_, all = parseAll(pieces, 0)
		}
	}
	all()
	bodies, pdiags := p.assemble(files)
	l := p.begin(bodies, plainBodies(pieces), append(diags, pdiags...), in)
	l.connected(in)
	return l.finish(paths, in)
}

// loadStaged is LoadFiles once the heads of pieces (in file order) are
// parsed without error, while the rest parse until all returns: the
// heads' top level is decoded and handed over, then the rest are added.
// It is false, with nothing reported, when the rest do not parse or hold
// more than services, indices and documents.
func (p *Parser) loadStaged(paths []string, files []*specFile, pieces []*piece, all func(), diags hcl.Diagnostics, in Inputs) (*Config, hcl.Diagnostics, bool) {
	bodies := make([]hcl.Body, len(pieces))
	var heads []*piece
	for i, pc := range pieces {
		if pc.head {
			bodies[i] = pc.file.Body
			heads = append(heads, pc)
		}
	}
	l := p.begin(bodies, plainBodies(heads), diags, in)
	l.connected(in)
	all()
	if slices.ContainsFunc(pieces, func(pc *piece) bool { return pc.diags.HasErrors() }) {
		return nil, nil, false
	}
	bodies, pdiags := p.assemble(files)
	l.plain = plainBodies(pieces)
	if !l.more(bodies) {
		return nil, nil, false
	}
	l.diags = append(l.diags, pdiags...)
	cfg, ldiags := l.finish(paths, in)
	return cfg, ldiags, true
}

// loading is a load under way: the top level of the specs decoded, their
// services, indices and documents not yet.
type loading struct {
	bg       *budget
	plain    map[hcl.Body]bool // bodies with nothing to bound
	d        *decoder
	cfg      *Config
	diags    hcl.Diagnostics
	contents []*hcl.BodyContent // by body, in file order
	proxy    *hcl.Block
	imports  []*Import
}

// begin decodes the top level of bodies (in file order; nil ones come
// later, through more): their limits are set, then the project, the
// variables, the locals and every block but the services, indices and
// documents are decoded.
func (p *Parser) begin(bodies []hcl.Body, plain map[hcl.Body]bool, diags hcl.Diagnostics, in Inputs) *loading {
	l := &loading{bg: &budget{}, plain: plain, cfg: &Config{Variables: map[string]*Variable{}}, diags: diags, contents: make([]*hcl.BodyContent, len(bodies))}
	l.read(bodies)
	cfg := l.cfg
	var localsBlocks []*hcl.Block
	for _, c := range l.contents {
		if c == nil {
			continue
		}
		localsBlocks = append(localsBlocks, c.Blocks.OfType("locals")...)
		for _, b := range c.Blocks.OfType("variable") {
			v, vdiags := decodeVariableBlock(b)
			l.diags = append(l.diags, vdiags...)
			if prev, dup := cfg.Variables[v.Name]; dup {
				l.diags = append(l.diags, duplicate("Duplicate variable block", fmt.Sprintf("variable %q", v.Name), b.LabelRanges[0], prev.DeclRange))
				continue
			}
			cfg.Variables[v.Name] = v
		}
	}
	l.diags = append(l.diags, assignValues(cfg.Variables, in, p.p.ParseHCLFile)...)
	var ldiags hcl.Diagnostics
	cfg.Locals, ldiags = decodeLocals(localsBlocks)
	l.diags = append(l.diags, ldiags...)
	d := &decoder{ctx: evalContext(cfg.Variables, l.bg.functions()), vars: cfg.Variables, locals: cfg.Locals, bg: l.bg}
	l.d = d
	d.evalLocals(cfg.Locals)

	var consulBlock *hcl.Block
	for _, c := range l.contents {
		if c == nil {
			continue
		}
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
			case "proxy":
				if l.proxy != nil {
					d.diags = append(d.diags, duplicate("Duplicate proxy block", "proxy block", b.DefRange, l.proxy.DefRange))
					continue
				}
				l.proxy = b
			case "consul":
				if consulBlock != nil {
					d.diags = append(d.diags, duplicate("Duplicate consul block", "consul block", b.DefRange, consulBlock.DefRange))
					continue
				}
				consulBlock = b
				cfg.Consul = d.consulBlock(b)
			case "agent":
				cfg.Agents = append(cfg.Agents, d.agentBlock(b))
			case "search":
				cfg.Searches = append(cfg.Searches, d.searchBlock(b))
			case "import":
				l.imports = append(l.imports, d.importBlocks(b)...)
			case "traefik":
				cfg.Traefiks = append(cfg.Traefiks, d.traefikBlock(b))
			case "variable", "locals", "service", "index", "document":
			default:
				if k, ok := kindOf(b.Type); ok && k.decode != nil {
					k.decode(d, cfg, b)
				}
			}
		}
	}
	return l
}

// read sets the limits of bodies and reads their top level, where a body
// is not nil.
func (l *loading) read(bodies []hcl.Body) {
	spread(len(bodies), runtime.GOMAXPROCS(0), func(_, lo, hi int) {
		for _, body := range bodies[lo:hi] {
			if body != nil && !l.plain[body] {
				l.bg.bound(body)
			}
		}
	})
	for i, body := range bodies {
		if body != nil {
			c, cdiags := body.Content(fileSchema)
			l.diags = append(l.diags, cdiags...)
			l.contents[i] = c
		}
	}
}

// connected hands the Config as far as it is decoded to in.Connected,
// when nothing so far is in error.
func (l *loading) connected(in Inputs) {
	if in.Connected != nil && !l.diags.HasErrors() && !l.d.diags.HasErrors() {
		partial := *l.cfg
		in.Connected(&partial)
	}
}

// more reads the bodies begin left for later (those of bodies whose
// place was nil there), which may hold only services, indices and
// documents; false when one holds more.
func (l *loading) more(bodies []hcl.Body) bool {
	if len(bodies) != len(l.contents) {
		return false
	}
	rest := make([]hcl.Body, len(bodies))
	for i, c := range l.contents {
		if c == nil {
			rest[i] = bodies[i]
		}
	}
	l.read(rest)
	for i, body := range rest {
		if body == nil {
			continue
		}
		c := l.contents[i]
		if len(c.Attributes) > 0 || slices.ContainsFunc(c.Blocks, func(b *hcl.Block) bool {
			return b.Type != "service" && b.Type != "index" && b.Type != "document"
		}) {
			return false
		}
	}
	return true
}

// finish decodes the services, indices and documents, in file order,
// and checks the whole.
func (l *loading) finish(paths []string, in Inputs) (*Config, hcl.Diagnostics) {
	cfg, d, diags := l.cfg, l.d, l.diags
	var serviceBlocks, indexBlocks, documentBlocks []*hcl.Block
	for _, c := range l.contents {
		serviceBlocks = append(serviceBlocks, c.Blocks.OfType("service")...)
		indexBlocks = append(indexBlocks, c.Blocks.OfType("index")...)
		documentBlocks = append(documentBlocks, c.Blocks.OfType("document")...)
	}
	cfg.Services = d.serviceBlocks(d.expand(serviceBlocks))
	cfg.Indices = d.indexBlocks(d.expand(indexBlocks))
	cfg.Documents = d.documentBlocks(d.expand(documentBlocks), cfg.Indices)
	if cfg.ProjectRange.Filename == "" && !slices.ContainsFunc(diags, func(d *hcl.Diagnostic) bool { _, ok := d.Extra.(unparsed); return ok }) {
		d.diags = append(d.diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Missing project",
			Detail:   "One spec file must set project = \"<name>\": the owner written on everything provision creates, so that it only ever changes or deletes its own objects.",
			Subject:  &hcl.Range{Filename: paths[0], Start: hcl.InitialPos, End: hcl.InitialPos},
		})
	}
	cfg.Proxy = d.proxyBlock(l.proxy, cfg.ProjectRange)
	d.checkAgents(cfg)
	d.checkTraefiks(cfg)
	d.checkServices(cfg)
	d.checkIndices(cfg)
	d.checkDocuments(cfg)
	for _, k := range Kinds {
		if k.check != nil {
			k.check(d, cfg)
		}
	}
	d.checkImports(cfg, l.imports, in.GenerateConfig)
	for _, v := range sortedVariables(cfg.Variables) {
		if v.Sensitive && v.Value != cty.NilVal {
			d.secrets = append(d.secrets, stringLeaves(v.Value)...)
		}
	}
	cfg.Secrets = d.secrets
	d.checkPublic(cfg)
	diags = append(diags, d.diags...)
	diags = append(diags, l.bg.unreported(diags, cfg.ProjectRange)...)
	sortDiagnostics(diags)
	return cfg, diags
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

var proxySchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "dialect"}, {Name: "prefix"}},
}

func (d *decoder) proxyBlock(b *hcl.Block, projectRange hcl.Range) Proxy {
	p := Proxy{Dialect: DialectTraefik, Prefix: "traefik", DeclRange: projectRange}
	if b == nil {
		return p
	}
	p.DeclRange = b.DefRange
	c := d.content(b.Body, proxySchema)
	if attr, ok := c.Attributes["dialect"]; ok {
		switch dl := Dialect(d.str(attr)); dl {
		case DialectTraefik, DialectTraefikV1, DialectTraefikV2, DialectTraefikV3:
			p.Dialect = dl
		case "":
		default:
			d.errorf(attr.Expr.Range(), b.DefRange, "Unsupported proxy dialect",
				"The dialect %q is not known; use \"traefik\" (Traefik 1 tags and tags both Traefik 2 and 3 accept, the default), \"traefik-v1\", \"traefik-v2\" or \"traefik-v3\".", dl)
		}
	}
	if attr, ok := c.Attributes["prefix"]; ok {
		p.Prefix = d.str(attr)
		if !tagPrefix.MatchString(p.Prefix) {
			d.errorf(attr.Expr.Range(), b.DefRange, "Invalid tag prefix",
				"The tag prefix %q must be letters, digits, \"-\" or \"_\", as in \"traefik\".", p.Prefix)
		}
	}
	return p
}

var tagPrefix = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

var consulSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "address"}, {Name: "datacenter"}},
}

func (d *decoder) consulBlock(b *hcl.Block) *Consul {
	c := d.content(b.Body, consulSchema)
	if attr, ok := c.Attributes["address"]; ok {
		d.noCredentials(attr, d.str(attr))
	}
	return &Consul{
		Address:    d.str(c.Attributes["address"]),
		Datacenter: d.str(c.Attributes["datacenter"]),
		DeclRange:  b.DefRange,
	}
}
