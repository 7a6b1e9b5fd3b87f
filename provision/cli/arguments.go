package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision"
	"github.com/provision-dev/provision/provision/adapter"
	"github.com/provision-dev/provision/provision/addrs"
	"github.com/provision-dev/provision/provision/connect"
	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/provision/run"
	"github.com/provision-dev/provision/provision/watch"
	"github.com/provision-dev/provision/schema"
)

// The arguments of each command, after Terraform's command/arguments:
// every flag of a command is declared here, into a typed value that
// cli.args parses once, and the command reads that value, never a flag
// set. The flags several commands share are declared once, by their
// group: viewArgs (-no-color, -json), netArgs (-timeout,
// -request-timeout), varArgs (-var, -var-file), runArgs (a plan's
// options) and sendArgs (an apply's).

// flagged is a command's arguments: register declares its flags.
type flagged interface{ register(fs flags) }

// flags is a command's flag set, with the kinds of the language its
// address flags parse.
type flags struct {
	*flag.FlagSet
	kinds addrs.Set
}

// addresses declares a repeatable address flag.
func (fs flags) addresses(list *[]addrs.Addr, name, usage string) {
	fs.Var(addrsFlag{list, fs.kinds}, name, usage)
}

// args parses the arguments of the command name into a, and returns the
// positional ones; false when the command should stop with code. A
// command with a JSON output gives its JSON view (see parse).
func (c *cli) args(name string, a flagged, args []string, maxArgs int, asJSON run.View) ([]string, int, bool) {
	fs := c.flagSet(name)
	a.register(fs)
	return c.parse(fs.FlagSet, args, maxArgs, asJSON)
}

// usage prints the usage of the command name, whose arguments a
// declares, on stderr.
func (c *cli) usage(name string, a flagged) {
	fs := c.flagSet(name)
	a.register(fs)
	fs.Usage()
}

// flagSet is a command's flags, with its usage text: the synopsis, what
// the command does, and the options.
func (c *cli) flagSet(name string) flags {
	i := slices.IndexFunc(commands, func(cmd command) bool { return cmd.name == name })
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(c.stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: provision %s\n\n%s\n\nOptions:\n", commands[i].synopsis, wrap(commands[i].about, 72))
		fs.PrintDefaults()
	}
	return flags{fs, c.Language.Kinds()}
}

// help prints the usage of fs on stdout, as -help and help CMD ask (the
// usage after a refused flag goes to stderr, with the refusal).
func (c *cli) help(fs *flag.FlagSet, usage func()) {
	fs.SetOutput(c.stdout)
	usage()
	fs.SetOutput(c.stderr)
}

// wrap breaks text into lines of at most width characters, at spaces.
func wrap(text string, width int) string {
	var b strings.Builder
	n := 0
	for _, w := range strings.Fields(text) {
		if n > 0 && n+1+len(w) > width {
			b.WriteByte('\n')
			n = 0
		} else if n > 0 {
			b.WriteByte(' ')
			n++
		}
		b.WriteString(w)
		n += len(w)
	}
	return b.String()
}

// parse parses flags that may stand before or after the positional
// arguments, as "provision plan specs -json" reads naturally. It returns
// false when the command should stop with code. A command with a JSON
// output gives its JSON view: when -json is among the arguments, a
// refused flag is a diagnostic on that stream, not usage on stderr.
func (c *cli) parse(fs *flag.FlagSet, args []string, maxArgs int, asJSON run.View) ([]string, int, bool) {
	usage := fs.Usage
	// The flag package prints the usage itself, on a refused flag and on
	// -help alike: here it is printed once, -help's on stdout.
	fs.Usage = func() {}
	if asJSON == nil || !wantsJSON(args) {
		asJSON = nil
	} else {
		fs.SetOutput(io.Discard)
	}
	refuse := func(detail string) ([]string, int, bool) {
		if asJSON != nil {
			asJSON.Diagnostics(run.Refusal("Invalid command line", detail+". Run provision "+fs.Name()+" -help for the options.", nil))
		}
		return nil, exitError, false
	}
	var pos []string
	out := fs.Output()
	fs.SetOutput(io.Discard) // a refusal is said here, in one line
	defer fs.SetOutput(out)
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) { // -help asks for the usage, -json or not
				c.help(fs, usage)
				return nil, exitOK, false
			}
			detail := err.Error()
			if name, ok := strings.CutPrefix(detail, "flag provided but not defined: -"); ok {
				detail = "-" + name + " is not an option of provision " + fs.Name()
				if hint, ok := terraformFlags[strings.TrimPrefix(name, "-")]; ok {
					detail = "-" + name + " is Terraform's, and provision " + fs.Name() + " has none: " + hint
				}
			}
			if asJSON == nil {
				fmt.Fprintf(c.stderr, "provision %s: %s. Run provision %s -help for the options.\n", fs.Name(), detail, fs.Name())
			}
			return refuse(detail)
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
	fs.SetOutput(out)
	if len(pos) > maxArgs {
		if asJSON == nil {
			fmt.Fprintf(c.stderr, "provision %s: too many arguments: %s\n", fs.Name(), strings.Join(pos, " "))
			usage()
		}
		return refuse("too many arguments: " + strings.Join(pos, " "))
	}
	return pos, exitOK, true
}

// terraformFlags are the flags of Terraform's commands that provision's
// lack, with what comes nearest.
var terraformFlags = map[string]string{
	"refresh-only":     "every plan reads the live objects, which are the state; provision plan shows what drifted with the changes that converge it, and provision pull writes the drift into the specs",
	"refresh":          "every plan reads the live objects, which are the state",
	"compact-warnings": "a warning said again at the same place is printed once",
	"parallelism":      "-parallelism is apply's and destroy's; a plan reads the servers side by side",
	"lock":             "a plan takes no lock; apply and destroy hold the project's lock in Consul (-lock, -lock-timeout)",
	"lock-timeout":     "a plan takes no lock; apply and destroy hold the project's lock in Consul (-lock, -lock-timeout)",
	"state":            "provision keeps no state file: the live objects are the state",
	"state-out":        "provision keeps no state file: the live objects are the state",
	"backup":           "provision keeps no state file: the live objects are the state",
	"upgrade":          "provision has no init and downloads nothing",
	"reconfigure":      "provision has no init and no backend",
	"backend-config":   "provision has no backend: the live objects are the state",
}

// wantsJSON reports whether args ask for JSON output: -json (with a true
// value, if any) or -format=json, with one dash or two.
func wantsJSON(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if !strings.HasPrefix(a, "-") {
			continue
		}
		name, value, set := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-"), "=")
		switch on, err := strconv.ParseBool(value); {
		case name == "json" && (!set || on && err == nil), name == "format" && value == "json":
			return true
		}
	}
	return false
}

// listFlag is a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// addrsFlag is a repeatable address flag (-target, -exclude, -replace),
// each address parsed as it is given, by the language's kinds: one that
// is no address is refused with the other arguments, before anything is
// read.
type addrsFlag struct {
	list  *[]addrs.Addr
	kinds addrs.Set
}

func (l addrsFlag) String() string {
	if l.list == nil {
		return ""
	}
	return strings.Join(addrs.Strings(*l.list), ",")
}

func (l addrsFlag) Set(v string) error {
	a, err := l.kinds.ParseTarget(v)
	if err == nil {
		*l.list = append(*l.list, a)
	}
	return err
}

// dirArg is the specs of a command: its folder argument, or else specs/,
// or else the working folder when it holds spec files and no specs/.
func dirArg(pos []string) string {
	if len(pos) > 0 {
		return pos[0]
	}
	// As Terraform's -chdir=envs/staging plan: a folder of spec files is
	// its own specs when it has no specs folder.
	if st, err := os.Stat("specs"); err != nil || !st.IsDir() {
		if files, _ := filepath.Glob("*.hcl"); len(files) > 0 {
			return "."
		}
	}
	return "specs"
}

// viewArgs are how a command prints.
type viewArgs struct{ noColor, json bool }

// register declares -no-color (color: the command prints in colors) and
// -json (jsonHelp: what it prints as JSON, "" for none).
func (a *viewArgs) register(fs flags, color bool, jsonHelp string) {
	if color {
		fs.BoolVar(&a.noColor, "no-color", false, "no colors in the output")
	}
	if jsonHelp != "" {
		fs.BoolVar(&a.json, "json", false, jsonHelp)
	}
}

// netArgs bound the network calls of a command.
type netArgs struct {
	timeout, request time.Duration
}

func (a *netArgs) register(fs flags, overall time.Duration) {
	fs.DurationVar(&a.timeout, "timeout", overall, "give up the whole command after this long")
	fs.DurationVar(&a.request, "request-timeout", adapter.DefaultDeadlines.Request, "give up one request to a server after this long (reads of refused, reset or 5xx-answering servers are retried; a Consul or Elasticsearch election is waited out within it)")
}

func (a *netArgs) deadlines() adapter.Deadlines {
	d := adapter.DefaultDeadlines
	d.Request = a.request
	return d
}

// bound is ctx ended by -timeout, with the cause saying so.
func (a *netArgs) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeoutCause(ctx, a.timeout, fmt.Errorf("the command ran past -timeout=%s", a.timeout))
}

// varArgs are the input-variable options every command that loads specs
// takes.
type varArgs struct {
	vars, files listFlag
	root        string
}

func (a *varArgs) register(fs flags) {
	fs.Var(&a.vars, "var", "set an input variable: -var name=value (repeatable)")
	fs.Var(&a.files, "var-file", "read input variables from an HCL file (repeatable)")
	fs.StringVar(&a.root, "root", "", "the `folder` the specs' modules and files may be anywhere inside, where no .git above the specs says (PROVISION_ROOT)")
}

// environ is env with -root, when given, as PROVISION_ROOT.
func (a *varArgs) environ(env func() []string) func() []string {
	if a.root == "" {
		return env
	}
	return func() []string { return append(env(), schema.RootEnv+"="+a.root) }
}

// runArgs are the options of a run that loads specs (run.Operation): a
// plan's all of them, other commands some (those they register).
type runArgs struct {
	vars              varArgs
	targets, excludes []addrs.Addr
	replace           []addrs.Addr
	net               netArgs
	prune             bool
	// verifyTimeout bounds the proof through the declared proxies after
	// an apply; set by apply's and destroy's -verify-timeout.
	verifyTimeout time.Duration
	// policies are -policies; judged says the command takes them (plan,
	// apply, destroy, test), and then PROVISION_POLICIES without the flag.
	policies, overrides listFlag
	judged              bool
}

// registerPolicies declares -policies.
func (a *runArgs) registerPolicies(fs flags) {
	a.judged = true
	fs.Var(&a.policies, "policies", "hold every plan to the policies of the *.policy.hcl files in `DIR`, Terraform Policy's resource_policy blocks (validate checks them); PROVISION_POLICIES, a list of folders, without the flag (repeatable)")
}

// registerOverride declares -policy-override, a plan's that sends or may
// be saved.
func (a *runArgs) registerOverride(fs flags) {
	fs.Var(&a.overrides, "policy-override", "let the failures of this mandatory_overridable policy through, as an owner's override: `KIND.NAME` (repeatable)")
}

// policyFolders are the folders of the policies a command is held to:
// -policies, else PROVISION_POLICIES (a list, as PATH writes one).
func (c *cli) policyFolders(a *runArgs) []string {
	if !a.judged || len(a.policies) > 0 {
		return a.policies
	}
	return filepath.SplitList(c.getenv("PROVISION_POLICIES"))
}

// register declares a plan's options.
func (a *runArgs) register(fs flags) {
	a.registerRemoval(fs)
	fs.BoolVar(&a.prune, "prune-indices", false, "delete the project's indices that the specs no longer declare (kept by default: they hold data)")
	fs.addresses(&a.replace, "replace", "register this owned service again in place even when converged, as after rotating the Consul token: service.<id> (repeatable)")
}

// registerRemoval declares the options of a plan that removes everything
// (destroy's): -replace and -prune-indices are not among them.
func (a *runArgs) registerRemoval(fs flags) {
	a.net.register(fs, 30*time.Minute)
	a.vars.register(fs)
	fs.addresses(&a.targets, "target", "plan only this object: "+fs.kinds.Forms()+", after agent.<name>. or search.<name>. when several are declared (repeatable)")
	fs.addresses(&a.excludes, "exclude", "leave this object out of the plan, or an agent and its services (agent.NAME: not read, as a node that is down) (repeatable)")
}

// operation is the run the arguments describe, with the environment.
func (c *cli) operation(t run.Type, dir string, a *runArgs) run.Operation {
	o := run.Operation{Type: t, Language: c.Language, Backends: c.Backends, Dir: dir, Vars: a.vars.vars, VarFiles: a.vars.files, Getenv: c.getenv, Environ: a.vars.environ(c.environ),
		Remove: plans.Removal{connect.RemoveIndices: a.prune}, Replace: a.replace, Targets: a.targets, Excludes: a.excludes, VerifyTimeout: a.verifyTimeout,
		Policies: c.policyFolders(a), PolicyKinds: c.PolicyKinds, PolicyOverrides: a.overrides}
	if a.net.request != 0 {
		o.Deadlines = a.net.deadlines()
	}
	return o
}

// planArgs are plan's.
type planArgs struct {
	view                  viewArgs
	run                   runArgs
	from                  fromArgs
	out, format, generate string
	detailed              bool
	input                 bool
	destroy, indices      bool
}

func (a *planArgs) register(fs flags) {
	fs.StringVar(&a.out, "out", "", "save the plan to `FILE`, for apply FILE")
	a.view.register(fs, true, "print the plan as JSON (format_version "+plans.FormatVersion+"); same as -format=json")
	fs.StringVar(&a.format, "format", "text", "`text`, json, or markdown (a pull-request comment, in parts under 65,000 characters)")
	fs.BoolVar(&a.detailed, "detailed-exitcode", false, "exit 0 with no changes, 1 on error, 2 with changes")
	fs.BoolVar(&a.input, "input", true, "taken as Terraform's: a plan never asks for input")
	fs.BoolVar(&a.destroy, "destroy", false, "plan the removal of what the project owns, as destroy does (with -out, apply FILE removes exactly that)")
	fs.BoolVar(&a.indices, "indices", false, "with -destroy, also delete the project's indices (never by default: they hold data)")
	fs.StringVar(&a.generate, "generate-config-out", "", "write the declarations of the objects that import blocks name and no block declares to `FILE` (never overwritten), then plan with it")
	a.from.register(fs)
	a.run.register(fs)
	a.run.registerPolicies(fs)
	a.run.registerOverride(fs)
}

// fromArgs say what a command that plans reads as the live state: the
// live systems (the default), a snapshot, or nothing live.
type fromArgs struct {
	snapshot   string
	greenfield bool
}

func (a *fromArgs) register(fs flags) {
	fs.StringVar(&a.snapshot, "snapshot", "", "plan from the live state recorded in `FILE` by provision snapshot, with no network; such a plan is never applied")
	fs.BoolVar(&a.greenfield, "greenfield", false, "plan against nothing live, with no network and no file (a first apply's plan, as provision test's runs without a snapshot); never applied")
}

// set makes op read from the snapshot or from nothing live, as asked;
// with neither, it reads the live systems.
func (a *fromArgs) set(op *run.Operation) hcl.Diagnostics {
	switch {
	case a.snapshot != "" && a.greenfield:
		return run.Refusal("Invalid options", "-snapshot plans from a recorded live state and -greenfield from none: give one of them.", nil)
	case a.greenfield:
		op.From = provision.Greenfield()
	case a.snapshot != "":
		var diags hcl.Diagnostics
		op.From, diags = readSnapshot(a.snapshot)
		return diags
	}
	return nil
}

// readSnapshot reads the snapshot at path and begins decoding its agents'
// states beside the load of the specs (provision.Snapshot.DecodeEarly).
func readSnapshot(path string) (*provision.Snapshot, hcl.Diagnostics) {
	s, diags := provision.ReadSnapshot(path)
	if !diags.HasErrors() {
		s.DecodeEarly(connect.StateDecoders())
	}
	return s, diags
}

// sendArgs are the options apply and destroy share.
type sendArgs struct {
	view        viewArgs
	autoApprove bool
	input       bool
	parallelism int
	lock        bool
	lockTimeout time.Duration
	run         runArgs
}

// register declares them; removal is destroy's, which takes no saved
// plan, -replace nor -prune-indices.
func (a *sendArgs) register(fs flags, removal bool) {
	fs.BoolVar(&a.autoApprove, "auto-approve", false, "do not ask for confirmation")
	refuse := "without -auto-approve or a saved plan"
	if removal {
		refuse = "without -auto-approve"
	}
	fs.BoolVar(&a.input, "input", true, "ask for confirmation on standard input, a terminal or not (-input=false: never ask, and "+refuse+" refuse at once)")
	fs.IntVar(&a.parallelism, "parallelism", 10, "send the requests of at most `N` objects at a time to each server (agent, cluster)")
	fs.BoolVar(&a.lock, "lock", true, "hold the project's lock in Consul while applying")
	fs.DurationVar(&a.lockTimeout, "lock-timeout", 0, "wait this long for the lock held by another run")
	if removal {
		a.view.register(fs, true, "print one JSON object per event (needs -auto-approve)")
		a.run.registerRemoval(fs)
	} else {
		a.view.register(fs, true, "print one JSON object per event (needs -auto-approve or a saved plan)")
		a.run.register(fs)
	}
	a.run.registerPolicies(fs)
	a.run.registerOverride(fs)
	fs.DurationVar(&a.run.verifyTimeout, "verify-timeout", run.DefaultVerifyTimeout, "wait this long for each declared traefik proxy to serve every gated path through its forward-auth middleware, then probe it")
}

// applyArgs are apply's.
type applyArgs struct {
	sendArgs
	snapshot string
	record   string
}

func (a *applyArgs) register(fs flags) {
	a.sendArgs.register(fs, false)
	fs.StringVar(&a.record, "record", "", "once the apply completes, add the entries of `FILE` (JSON: {commit, change, digest, job}, or an array of them) to the project's history in Consul, under the lock (provision history prints it)")
	fs.StringVar(&a.snapshot, "snapshot", "", "refused: a plan made from a snapshot is never applied (use plan -snapshot `FILE`)")
}

// destroyArgs are destroy's.
type destroyArgs struct {
	sendArgs
	indices bool
}

func (a *destroyArgs) register(fs flags) {
	a.sendArgs.register(fs, true)
	fs.BoolVar(&a.indices, "indices", false, "also delete the project's indices (never by default: they hold data)")
}

// plannedArgs are graph's and list's: a plan's options, and where it
// reads the live state from.
type plannedArgs struct {
	run  runArgs
	from fromArgs
}

func (a *plannedArgs) register(fs flags) {
	a.from.register(fs)
	a.run.register(fs)
}

// outputArgs are output's.
type outputArgs struct {
	plannedArgs
	view viewArgs
	raw  bool
}

func (a *outputArgs) register(fs flags) {
	a.view.register(fs, true, "print the outputs as one JSON object: each name with its value and whether it is sensitive")
	fs.BoolVar(&a.raw, "raw", false, "print the one output NAME's value as it is, a string without quotes (for a script)")
	a.plannedArgs.register(fs)
}

// showArgs are show's.
type showArgs struct {
	view             viewArgs
	format, partsDir string
}

func (a *showArgs) register(fs flags) {
	a.view.register(fs, true, "print the plan as JSON; same as -format=json")
	fs.StringVar(&a.format, "format", "text", "`text`, json, or markdown")
	fs.StringVar(&a.partsDir, "parts-dir", "", "with -format=markdown, write each part to `DIR`/part-N.md (one pull-request comment each) instead of printing")
}

// validateArgs are validate's.
type validateArgs struct {
	view viewArgs
	run  runArgs
}

func (a *validateArgs) register(fs flags) {
	a.view.register(fs, true, "print the diagnostics as JSON")
	a.run.vars.register(fs)
	a.run.registerPolicies(fs)
}

// policyArgs are policy's.
type policyArgs struct {
	view  viewArgs
	watch bool
	node  string
	run   runArgs
}

func (a *policyArgs) register(fs flags) {
	a.view.register(fs, false, "print the policy as JSON: the rules and each permission")
	fs.BoolVar(&a.watch, "watch", false, "add what provision watch needs: write on the key provision/watch/<project>, where its replicas elect the healer")
	fs.StringVar(&a.node, "node", "", "the node name of the agent that holds the lock, when it cannot be looked up (GET /v1/agent/self needs agent:read)")
	a.run.vars.register(fs)
	a.run.net.register(fs, 5*time.Minute)
}

// pullArgs are pull's.
type pullArgs struct {
	view           viewArgs
	diff, detailed bool
	snapshot       string
	run            runArgs
}

func (a *pullArgs) register(fs flags) {
	fs.BoolVar(&a.diff, "diff", false, "print the rewrites as a unified diff of the spec files and write nothing")
	fs.BoolVar(&a.detailed, "detailed-exitcode", false, "exit 0 when nothing is left to pull, 1 on error, 2 when files were (or, with -diff, would be) rewritten, 4 when what drifted cannot be pulled (it comes from a variable, a module input or each)")
	a.view.register(fs, true, "")
	fs.StringVar(&a.snapshot, "snapshot", "", "pull from the live state recorded in `FILE` by provision snapshot, with no network")
	a.run.net.register(fs, 30*time.Minute)
	a.run.vars.register(fs)
	fs.addresses(&a.run.targets, "target", "pull only this object (an address as plan's -target takes it; repeatable)")
	fs.addresses(&a.run.excludes, "exclude", "leave this object out of the pull (repeatable)")
}

// snapshotArgs are snapshot's.
type snapshotArgs struct {
	view viewArgs
	out  string
	run  runArgs
}

func (a *snapshotArgs) register(fs flags) {
	fs.StringVar(&a.out, "out", "", "write the snapshot to `FILE` (required)")
	a.view.register(fs, true, "")
	a.run.vars.register(fs)
	a.run.net.register(fs, 30*time.Minute)
}

// testArgs are test's.
type testArgs struct {
	view          viewArgs
	update        bool
	filter, junit string
	run           runArgs
}

func (a *testArgs) register(fs flags) {
	a.run.registerPolicies(fs)
	fs.BoolVar(&a.update, "update", false, "write the golden plans of the runs (new or changed) instead of failing; review the diff before committing")
	fs.StringVar(&a.filter, "run", "", "run only the runs whose name matches `REGEX`")
	a.view.register(fs, true, "print one JSON object per run and one for the summary")
	fs.StringVar(&a.junit, "junit-xml", "", "also write the results to `FILE` as JUnit XML: one test case per run")
}

// watchArgs are watch's: a plan's options but -timeout (a watch runs
// until stopped), -target and -replace (a watch repairs what drifted, and
// a replace would drift for ever), and how it watches and heals.
type watchArgs struct {
	view                    viewArgs
	heal                    bool
	interval, window        time.Duration
	buffer, listen          string
	maxRepairs, parallelism int
	lockTimeout             time.Duration
	run                     runArgs
}

func (a *watchArgs) register(fs flags) {
	a.run.registerPolicies(fs)
	fs.BoolVar(&a.heal, "heal", false, "apply the plan of what drifted, under the lock (without it, drift is only reported)")
	fs.DurationVar(&a.interval, "interval", watch.DefaultInterval, "poll the search clusters and proxies, which have no change feed, this often (with jitter)")
	fs.StringVar(&a.buffer, "buffer", fmt.Sprintf("%s,%s", watch.DefaultBufferMin, watch.DefaultBufferMax), "`MIN,MAX`: wait for MIN of quiet after a change, MAX at most, before one reconcile")
	fs.IntVar(&a.maxRepairs, "max-repairs", watch.DefaultMaxRepairs, "leave an object alone after this many repairs within -repair-window (something fights provision)")
	fs.DurationVar(&a.window, "repair-window", watch.DefaultWindow, "the window of -max-repairs")
	fs.StringVar(&a.listen, "listen", "", "serve /metrics (Prometheus text format) and /healthz on `ADDR`")
	a.view.register(fs, false, "log one JSON object per event")
	fs.DurationVar(&a.lockTimeout, "lock-timeout", time.Minute, "wait this long for the project's lock held by another run before a repair")
	fs.IntVar(&a.parallelism, "parallelism", 10, "send the requests of at most `N` objects at a time to each server (agent, cluster)")
	fs.DurationVar(&a.run.net.request, "request-timeout", adapter.DefaultDeadlines.Request, "give up one request to a server after this long")
	fs.BoolVar(&a.run.prune, "prune-indices", false, "also delete the project's indices that the specs no longer declare")
	a.run.vars.register(fs)
	fs.addresses(&a.run.excludes, "exclude", "never plan or repair this object (repeatable)")
	fs.DurationVar(&a.run.verifyTimeout, "verify-timeout", 30*time.Second, "wait this long for each declared traefik proxy to prove the gate after a repair")
}

// completionArgs are completion's.
type completionArgs struct{ addresses bool }

func (a *completionArgs) register(fs flags) {
	fs.BoolVar(&a.addresses, "addresses", false, "print the addresses of the objects the specs of DIR declare, one a line (what the scripts complete -target, -exclude and -replace with); reads no server")
}

// fmtArgs are fmt's.
type fmtArgs struct{ check, diff, recursive bool }

func (a *fmtArgs) register(fs flags) {
	fs.BoolVar(&a.check, "check", false, "change nothing; list the files not in canonical layout and exit 3 if any")
	fs.BoolVar(&a.diff, "diff", false, "print each file's changes as a unified diff (with -check, write nothing)")
	fs.BoolVar(&a.recursive, "recursive", false, "format every .hcl file under DIR (tests and modules included), not only DIR and the module folders its specs call")
}

// versionArgs are version's.
type versionArgs struct{ view viewArgs }

func (a *versionArgs) register(fs flags) {
	a.view.register(fs, false, "print one JSON object: version, module, go, platform, revision")
}
