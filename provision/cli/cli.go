package cli

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/agext/levenshtein"
	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision/connect"
	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/provision/policies"
	"github.com/provision-dev/provision/schema"
	"golang.org/x/term"
)

// Exit codes, as Terraform's.
const (
	exitOK      = 0
	exitError   = 1
	exitChanges = 2 // plan -detailed-exitcode: the plan has changes
)

// A command of the CLI: its name, the synopsis and paragraph its -help
// prints (docs/commands/<name>.md repeats both; a test holds them
// together), and the line the command list shows. cli.run runs it.
type command struct {
	name, synopsis, summary, about string
}

// commands are the CLI's commands, in the order the help lists them.
var commands = []command{
	{"plan", "plan [options] [DIR]", "Read the live state, diff it against the specs, print the requests",
		"Reads the live objects the specs of DIR declare (Consul services and KV keys on each agent, search indices and their documents on each cluster, the routers of each declared Traefik proxy), diffs them against the declarations and prints the changes with the exact HTTP requests an apply would send, in order. Nothing is written."},
	{"apply", "apply [options] [DIR | FILE.hcl | PLANFILE]", "Apply the specs of DIR (after confirmation) or a saved plan",
		"Plans as plan does, shows the plan, asks for yes, then sends the requests under the project's lock in Consul: registers and deregisters services, writes and deletes KV keys, creates indices and their mappings, writes documents in bulk; then proves the gate through each declared proxy. Given a saved plan, it plans again and sends only when nothing moved."},
	{"destroy", "destroy [options] [DIR]", "Remove what the project owns (indices only with -indices)",
		"Plans the removal of everything the project owns: its services and KV keys; its indices, with their documents, only with -indices (they hold data). Shows the plan, asks for yes and sends it under the lock, as apply does."},
	{"pull", "pull [options] [DIR]", "Write what people changed on owned objects back into the specs",
		"Plans as plan does and, for every object the project owns whose live values differ from its declaration (a dashboard edited in the tool, a tag added on the agent, a KV value changed by hand), rewrites the values its block writes in place, in the HCL (comments, order and layout kept) or in the JSON file read through file(), so that the next plan leaves it alone. A value the specs compute (a variable, a local, each, another function) is reported, not rewritten; values under ignore_changes, objects the project does not own and sensitive values are never pulled."},
	{"validate", "validate [options] [DIR]", "Check the specs offline: syntax, schema, references, rules",
		"Checks the specs of DIR with no network: syntax, the schema of every block (services, frontends, checks, keys, indices, documents, agents, proxies, imports), references, variables, frontend rules, mapping types and each document's fields against its type's mapping. Every error names its file, line and column."},
	{"fmt", "fmt [options] [DIR]", "Rewrite the specs in canonical layout",
		"Rewrites the .hcl files of DIR, and of the local module folders its specs call, in canonical layout (hcl's own), in place; with -recursive, every .hcl file under DIR."},
	{"show", "show [options] PLANFILE", "Print a saved plan",
		"Prints a plan saved with plan -out, as text, JSON or a pull-request comment in Markdown. Reads no server."},
	{"graph", "graph [options] [DIR]", "Print the apply order as a Graphviz (DOT) graph",
		"Plans as plan does and prints the order the changes would be sent in (a service before the proxy proves its gate, an index before its documents) as a Graphviz DOT graph."},
	{"list", "list [options] [DIR]", "List the address of every object the project owns",
		"Plans as plan does (from the live systems, a snapshot or nothing live) and prints the address of every object the project owns, one a line, as -target and scripts take them: those the plan leaves, updates, deletes or lets go of. Nothing is written."},
	{"output", "output [options] [DIR] [NAME]", "Print the specs' outputs",
		"Plans as plan does (from the live systems, a snapshot or nothing live) and prints the output blocks of the root specs, name = value, a sensitive one's value as (sensitive); with NAME, that output's value alone. Nothing is written."},
	{"console", "console [options] [DIR]", "Evaluate expressions in the specs' scope",
		"Reads expressions from stdin (or a prompt), one a line, and prints each one's value as evaluated in the root specs' scope: var, local, module outputs, path and the functions, as terraform console does. Reads no server; an expression that fails is a diagnostic with its line and column, and the command then exits 1. exit or the end of the input ends it."},
	{"policy", "policy [options] [DIR]", "Print the least-privilege Consul ACL policy the specs need",
		"Prints the Consul ACL rules a token needs to plan and apply the specs of DIR: service and key_prefix writes for what they declare, the lock's key and session, the record of the project's agents and the history of its applies; with -watch, the watcher's election key too. Reads the agent's node name when it can."},
	{"history", "history [options] [DIR]", "Print the project's history of applies, kept in Consul",
		"Prints the history of the project's applies that Consul keeps beside its lock (provision/history/<project>), oldest first: each apply -record that completed, with the commit, change (pull request), digest of the reviewed changes and job it names, and when it completed. The pipeline step reads it to tell what a merge's apply still has to do. Nothing is written."},
	{"snapshot", "snapshot [options] -out FILE [DIR]", "Record the live state a plan reads, to plan from it offline",
		"Reads every backend the specs declare, as plan does (services, checks, KV keys, indices, documents, proxies), and writes what it read to FILE: one versioned, deterministic JSON file with no secret in it, for plan -snapshot and provision test."},
	{"test", "test [options] [DIR]", "Run DIR/tests/*.provtest.hcl: plans from snapshots against golden files",
		"Runs the run blocks of DIR/tests/*.provtest.hcl with no network: each plans the specs against a snapshot, compares the plan (text and JSON) with its golden files and checks that applying it in memory converges."},
	{"watch", "watch [options] [DIR]", "Keep watching: report drift, or repair it with -heal",
		"Runs until stopped: follows the Consul agents' services and KV keys through their change feeds and polls the search clusters and proxies, plans after each change and reports drift of any declared object; with -heal, applies the plan of what drifted under the lock, one healer per project at a time."},
	{"completion", "completion [options] bash | zsh | fish", "Print a shell's completion script",
		"Prints the completion script of bash, zsh or fish: the commands, each command's flags, and for -target, -exclude and -replace the addresses of the services, keys, indices and documents the specs declare (read offline, from the DIR on the command line or specs/). Load it with: source <(provision completion bash).",
	},
	{"version", "version [options]", "Print the version, the Go version and the revision it was built from",
		"Prints the version of provision (the release's, or the module version go install was given), the Go version and platform it was built with, and the VCS revision of its source, all read from the binary's own build information."},
}

// usage is the text of provision -help.
func usage() string {
	var b strings.Builder
	b.WriteString(`Usage: provision <command> [options] [DIR | PLANFILE]

provision declares Consul service registrations (with Traefik tags) and
KV keys, search-cluster indices and their documents in HCL, shows the
exact requests that bring the live systems to the declared state, sends
them, and proves the gate through the declared Traefik proxies.

Commands:
`)
	for _, cmd := range commands {
		fmt.Fprintf(&b, "  %-9s %s\n", cmd.name, cmd.summary)
	}
	b.WriteString(`
DIR defaults to specs/. Run "provision <command> -help" for its options;
docs/commands/<command>.md has each command's page.

Environment:
  CONSUL_HTTP_ADDR, CONSUL_HTTP_TOKEN, CONSUL_CACERT, ...   the Consul agent
  ELASTICSEARCH_URL, ELASTICSEARCH_USERNAME, ELASTICSEARCH_PASSWORD,
  ELASTICSEARCH_API_KEY, ELASTICSEARCH_CA_CERT              the search clusters
  TRAEFIK_API_USERNAME, TRAEFIK_API_PASSWORD                a proxy API behind basic auth
  PROVISION_VAR_<name>                                      input variables
  SOURCE_DATE_EPOCH                                         the time a snapshot records
  NO_COLOR                                                  plain output
  GITHUB_ACTIONS=true                                       diagnostics also as workflow annotations

Exit codes: 0 success, 1 error, 2 changes present (plan -detailed-exitcode;
pull -detailed-exitcode: files rewritten),
3 files not formatted (fmt -check).
`)
	return b.String()
}

// Options are what a binary hands its CLI: what its specs may declare and
// what it says of itself.
type Options struct {
	// Language is the kinds and places the specs may declare: a kind
	// left out is a block the specs cannot write, and an address no flag
	// takes.
	Language *schema.Language
	// PolicyKinds are what policies see of each kind of object planned.
	PolicyKinds []policies.Kind
	// Backends open the live systems of kinds of the language that
	// provision/connect does not know (see connect.Opener).
	Backends []connect.Opener
	// Version is the binary's release ("dev" when empty); version reads
	// the rest from the build information.
	Version string
}

// Run runs the command args name, with its arguments, as the provision
// binary does, and returns the code the binary exits with (provision
// -help lists them). Options.Language is required.
func Run(o Options, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return newCLI(o, stdin, stdout, stderr).run(args)
}

// cli holds the streams a command reads and writes and the environment
// it reads; no command prints to anything but its output.
type cli struct {
	*output
	environ func() []string
	Options
}

// output is what the views write to (and an apply's confirmation reads),
// and all they hold of the CLI: the streams, how they may look (a
// terminal, NO_COLOR, GITHUB_ACTIONS), and the secrets hidden in
// everything printed.
type output struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	// isTerminal reports whether a stream is an interactive terminal.
	isTerminal func(any) bool
	getenv     func(string) string
	// secrets are the values of the specs' sensitive variables, hidden in
	// everything the command prints.
	secrets []string
}

func newCLI(o Options, stdin io.Reader, stdout, stderr io.Writer) *cli {
	if o.Language == nil {
		panic("cli: Options.Language is nil: a binary names the kinds and places its specs may declare")
	}
	o.Version = cmp.Or(o.Version, "dev")
	return &cli{output: &output{stdin: stdin, stdout: stdout, stderr: stderr, isTerminal: isTerminal, getenv: os.Getenv}, environ: os.Environ, Options: o}
}

func isTerminal(s any) bool {
	f, ok := s.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func (c *cli) run(args []string) int {
	// -chdir=DIR, before the command, as Terraform's: the command runs
	// in DIR, and every path it is given is relative to DIR.
	if len(args) > 0 && (strings.HasPrefix(args[0], "-chdir=") || strings.HasPrefix(args[0], "--chdir=")) {
		_, dir, _ := strings.Cut(args[0], "=")
		if err := os.Chdir(dir); err != nil {
			fmt.Fprintf(c.stderr, "provision: -chdir: %v\n", err)
			return exitError
		}
		args = args[1:]
	}
	if len(args) == 0 {
		fmt.Fprint(c.stderr, usage())
		return exitError
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "version", "-version", "--version":
		return c.version(rest)
	case "help", "-help", "--help", "-h":
		if len(rest) > 0 && cmd == "help" && slices.ContainsFunc(commands, func(k command) bool { return k.name == rest[0] }) {
			return c.run([]string{rest[0], "-help"}) // help CMD is CMD -help
		}
		if len(rest) > 0 && cmd == "help" {
			return c.unknown(rest[0])
		}
		fmt.Fprint(c.stdout, usage())
		return exitOK
	case "plan":
		return c.plan(rest)
	case "apply":
		return c.apply(rest)
	case "destroy":
		return c.destroy(rest)
	case "validate":
		return c.validate(rest)
	case "pull":
		return c.pull(rest)
	case "fmt":
		return c.fmt(rest)
	case "show":
		return c.show(rest)
	case "graph":
		return c.graph(rest)
	case "list":
		return c.list(rest)
	case "console":
		return c.console(rest)
	case "output":
		return c.outputCmd(rest)
	case "watch":
		return c.watchCmd(rest)
	case "policy":
		return c.policy(rest)
	case "snapshot":
		return c.snapshot(rest)
	case "history":
		return c.history(rest)
	case "test":
		return c.test(rest)
	case "completion":
		return c.completion(rest)
	}
	return c.unknown(cmd)
}

// unknown refuses a command provision does not have, naming the nearest
// one when it looks like a typo of it.
func (c *cli) unknown(cmd string) int {
	fmt.Fprintf(c.stderr, "provision: unknown command %q.", cmd)
	best, dist := "", 3
	for _, k := range commands {
		if d := levenshtein.Distance(cmd, k.name, nil); d < dist {
			best, dist = k.name, d
		}
	}
	if best != "" {
		fmt.Fprintf(c.stderr, " Did you mean %q?", best)
	}
	fmt.Fprintln(c.stderr, "\nRun provision -help for the commands.")
	return exitError
}

// color reports whether output to w may be colored: a terminal, no
// NO_COLOR, no -no-color.
func (o *output) color(w io.Writer, noColor bool) bool {
	return !noColor && o.getenv("NO_COLOR") == "" && o.isTerminal(w)
}

// printDiags prints diagnostics with snippets, all at once; under GitHub
// Actions also as workflow annotations, so they show on the pull request.
func (o *output) printDiags(diags hcl.Diagnostics, files map[string]*hcl.File, color bool) {
	if len(diags) == 0 {
		return
	}
	diags = o.hide(diags)
	files = withJSONSources(files, diags)
	shown := diags[:min(len(diags), snippets)]
	// The snippets are written through the credentials' redaction: the
	// last line of defence, should a source hold a credential's value.
	var text strings.Builder
	for _, d := range shown {
		_ = hcl.NewDiagnosticTextWriter(&text, upTo(files, d), 0, color).WriteDiagnostic(d)
	}
	io.WriteString(o.stderr, plans.HideSecrets(text.String(), o.credentials()))
	if rest := diags[len(shown):]; len(rest) > 0 {
		// hcl finds a snippet by scanning the file from its start, once
		// per diagnostic: a thousand of them in a large spec add up.
		fmt.Fprintf(o.stderr, "%d more diagnostics, without source snippets:\n\n", len(rest))
		for _, d := range rest {
			fmt.Fprintln(o.stderr, shortDiag(d))
		}
	}
	if o.getenv("GITHUB_ACTIONS") == "true" {
		for _, d := range diags {
			fmt.Fprintln(o.stdout, annotation(d))
		}
	}
}

// upTo is files with the one d quotes cut after the last line it quotes:
// hcl's writer scans a file from its start to its end for the lines of a
// snippet, for every diagnostic.
func upTo(files map[string]*hcl.File, d *hcl.Diagnostic) map[string]*hcl.File {
	if d.Subject == nil || files[d.Subject.Filename] == nil {
		return files
	}
	f := files[d.Subject.Filename]
	end := d.Subject.End.Byte
	if d.Context != nil && d.Context.Filename == d.Subject.Filename {
		end = max(end, d.Context.End.Byte)
	}
	if end < 0 || end >= len(f.Bytes) {
		return files
	}
	i := bytes.IndexByte(f.Bytes[end:], '\n')
	if i < 0 {
		return files
	}
	cut := maps.Clone(files)
	cut[d.Subject.Filename] = &hcl.File{Body: f.Body, Bytes: f.Bytes[:end+i+1], Nav: f.Nav}
	return cut
}

// withJSONSources adds to files the JSON files that diagnostics point
// into (a snapshot), read from disk, so that they are quoted too.
func withJSONSources(files map[string]*hcl.File, diags hcl.Diagnostics) map[string]*hcl.File {
	out := files
	for _, d := range diags {
		if d.Subject == nil || !strings.HasSuffix(d.Subject.Filename, ".json") || out[d.Subject.Filename] != nil {
			continue
		}
		src, err := os.ReadFile(d.Subject.Filename)
		if err != nil {
			continue
		}
		if len(out) == len(files) {
			out = maps.Clone(files)
			if out == nil {
				out = map[string]*hcl.File{}
			}
		}
		out[d.Subject.Filename] = &hcl.File{Bytes: src}
	}
	return out
}

// snippets is how many diagnostics are printed with their source lines.
const snippets = 20

// shortDiag is a diagnostic on one line, for those past the first
// snippets: "Error: summary (file:line,col): detail".
func shortDiag(d *hcl.Diagnostic) string {
	kind := "Error"
	if d.Severity == hcl.DiagWarning {
		kind = "Warning"
	}
	at := ""
	if r := d.Subject; r != nil {
		at = fmt.Sprintf(" (%s:%d,%d)", r.Filename, r.Start.Line, r.Start.Column)
	}
	return fmt.Sprintf("%s: %s%s: %s", kind, d.Summary, at, d.Detail)
}

// hide returns diagnostics whose texts hold no secret.
// credentialEnv are the environment variables that hold credentials,
// whose values no diagnostic shows.
var credentialEnv = []string{"CONSUL_HTTP_TOKEN", "CONSUL_HTTP_AUTH", "ELASTICSEARCH_PASSWORD", "ELASTICSEARCH_API_KEY", "TRAEFIK_API_PASSWORD"}

// credentials are the secrets and the values of the credentials in the
// environment.
func (o *output) credentials() []string {
	out := slices.Clone(o.secrets)
	for _, name := range credentialEnv {
		if v := o.getenv(name); v != "" {
			out = append(out, v)
		}
	}
	return out
}

func (o *output) hide(diags hcl.Diagnostics) hcl.Diagnostics {
	if len(o.secrets) == 0 {
		return diags
	}
	out := make(hcl.Diagnostics, len(diags))
	for i, d := range diags {
		h := *d
		h.Summary, h.Detail = plans.HideSecrets(d.Summary, o.secrets), plans.HideSecrets(d.Detail, o.secrets)
		out[i] = &h
	}
	return out
}

// annotation is a GitHub Actions workflow command for a diagnostic:
// ::error file=F,line=L,col=C,endLine=L,endColumn=C,title=T::message
func annotation(d *hcl.Diagnostic) string {
	kind := "error"
	if d.Severity == hcl.DiagWarning {
		kind = "warning"
	}
	props := []string{}
	if r := d.Subject; r != nil {
		props = append(props,
			"file="+escapeProperty(r.Filename),
			fmt.Sprintf("line=%d,col=%d,endLine=%d,endColumn=%d", r.Start.Line, r.Start.Column, r.End.Line, r.End.Column))
	}
	props = append(props, "title="+escapeProperty(d.Summary))
	return "::" + kind + " " + strings.Join(props, ",") + "::" + escapeData(d.Detail)
}

var (
	dataEscaper     = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A")
	propertyEscaper = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C")
)

func escapeData(s string) string     { return dataEscaper.Replace(s) }
func escapeProperty(s string) string { return propertyEscaper.Replace(s) }
