package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision"
	"github.com/provision-dev/provision/provision/connect"
)

// applyFlags are the options apply and destroy share.
type applyFlags struct {
	autoApprove *bool
	parallelism *int
	noColor     *bool
	json        *bool
	lock        *bool
	lockTimeout *time.Duration
	plan        planFlags
}

func registerApplyFlags(fs *flag.FlagSet) *applyFlags {
	f := &applyFlags{
		autoApprove: fs.Bool("auto-approve", false, "do not ask for confirmation"),
		parallelism: fs.Int("parallelism", 10, "send the requests of at most `N` objects at a time"),
		noColor:     fs.Bool("no-color", false, "no colors in the output"),
		json:        fs.Bool("json", false, "print one JSON object per event (needs -auto-approve or a saved plan)"),
		lock:        fs.Bool("lock", true, "hold the project's lock in Consul while applying"),
		lockTimeout: fs.Duration("lock-timeout", 0, "wait this long for the lock held by another run"),
	}
	f.plan.register(fs)
	fs.DurationVar(&f.plan.verifyTimeout, "verify-timeout", connect.DefaultVerifyTimeout, "wait this long for each declared traefik proxy to serve every gated path through its forward-auth middleware, then probe it")
	return f
}

// netFlags bound the network calls of a command.
type netFlags struct {
	timeout, request *time.Duration
}

func (f *netFlags) register(fs *flag.FlagSet, overall time.Duration) {
	f.timeout = fs.Duration("timeout", overall, "give up the whole command after this long")
	f.request = fs.Duration("request-timeout", provision.DefaultDeadlines.Request, "give up one request to a server after this long (reads of refused, reset or 5xx-answering servers are retried)")
}

func (f *netFlags) deadlines() provision.Deadlines {
	d := provision.DefaultDeadlines
	d.Request = *f.request
	return d
}

// interruptible is the context of a command that writes: the first
// SIGINT or SIGTERM cancels it (no new request starts; the ones under way
// finish), a second one ends the process at once, and -timeout bounds it.
func interruptible(f *netFlags) (context.Context, func()) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop() // the default action again: a second Ctrl-C exits at once
	}()
	tctx, cancel := f.bound(ctx)
	return tctx, func() { cancel(); stop() }
}

// bound is ctx ended by -timeout, with the cause saying so.
func (f *netFlags) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeoutCause(ctx, *f.timeout, fmt.Errorf("the command ran past -timeout=%s", *f.timeout))
}

// lock takes the project's lock in Consul: on the cluster's agent (the
// consul block's, CONSUL_HTTP_ADDR's, or the first agent block's). It
// returns false when the command must stop.
func (c *cli) lock(ctx context.Context, v applyView, s *specs, operation string, f *applyFlags) (context.Context, func(), bool) {
	if !*f.lock {
		return ctx, func() {}, true
	}
	l := c.clusterAgent(s, &f.plan.net)
	if l == nil {
		v.failed(hcl.Diagnostics{{Severity: hcl.DiagWarning, Summary: "Running without the lock",
			Detail: fmt.Sprintf("No Consul agent is configured to hold the lock, so this %s runs without one.", operation)}})
		return ctx, func() {}, true
	}
	lctx, unlock, err := l.Lock(ctx, s.cfg.Project, operation, *f.lockTimeout)
	if err != nil {
		advice := "Try again later, or raise -lock-timeout."
		if _, refused := provision.Refused(err); refused {
			advice = fmt.Sprintf("The token may not take the lock: it needs session:write on the node of that agent and key:write on %s. Retrying will not help; provision policy prints the policy these specs need.", connect.LockKey(s.cfg.Project))
		}
		v.failed(refusal("Cannot take the lock", fmt.Sprintf("%s. Nothing was sent. %s", err, advice), s.cfg.ProjectRange.Ptr()))
		return nil, nil, false
	}
	return lctx, unlock, true
}

// refusal is a command's own refusal to go on, as the one error a view
// shows (with its range when it has one).
func refusal(summary, detail string, at *hcl.Range) hcl.Diagnostics {
	return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: summary, Detail: detail, Subject: at}}
}

func (c *cli) apply(args []string) int {
	fs := c.flagSet("apply", "apply [options] [DIR | FILE.hcl | PLANFILE]")
	f := registerApplyFlags(fs)
	pos, code, ok := c.parse(fs, args, 1)
	if !ok {
		return code
	}
	ctx, stop := interruptible(&f.plan.net)
	defer stop()
	if len(pos) == 1 && !strings.HasSuffix(pos[0], ".hcl") {
		if st, err := os.Stat(pos[0]); err == nil && st.Mode().IsRegular() {
			return c.applySaved(ctx, pos[0], f)
		}
	}
	return c.planAndApply(ctx, dirArg(pos), f, provision.Converge, true, "apply", "Do you want to perform these actions?")
}

func (c *cli) destroy(args []string) int {
	fs := c.flagSet("destroy", "destroy [options] [DIR]")
	f := registerApplyFlags(fs)
	indices := fs.Bool("indices", false, "also delete the project's indices (never by default: they hold data)")
	pos, code, ok := c.parse(fs, args, 1)
	if !ok {
		return code
	}
	ctx, stop := interruptible(&f.plan.net)
	defer stop()
	return c.planAndApply(ctx, dirArg(pos), f, provision.Destroy, *indices, "destroy", "Do you really want to destroy these objects?")
}

// applyView is the view the flags choose.
func (c *cli) applyView(f *applyFlags, s *specs) applyView {
	if *f.json {
		return jsonApply{jsonView{c}}
	}
	return &humanApply{textView: c.planView(false, *f.noColor, s).(textView), live: c.isTerminal(c.stderr)}
}

// planAndApply plans dir under the lock, shows the plan, asks, and
// applies it.
func (c *cli) planAndApply(ctx context.Context, dir string, f *applyFlags, mode provision.Mode, indices bool, command, question string) int {
	if *f.json && !*f.autoApprove {
		c.applyView(f, nil).failed(refusal("Confirmation needed", fmt.Sprintf("%s -json needs -auto-approve: a JSON stream cannot ask for confirmation.", command), nil))
		return exitError
	}
	s, bs, diags := c.open(dir, &f.plan, indices)
	v := c.applyView(f, s)
	if diags = append(diags, provision.Preflight(ctx, bs)...); diags.HasErrors() {
		v.failed(diags)
		return exitError
	}
	ctx, unlock, ok := c.lock(ctx, v, s, command, f)
	if !ok {
		return exitError
	}
	defer unlock()
	p, diags := c.makePlan(ctx, s, bs, &f.plan, mode)
	if diags.HasErrors() {
		v.failed(diags)
		return exitError
	}
	p.Dir = dir
	v.plan(p, diags)
	remember := c.remember(v, s, &f.plan.net, mode)
	if !p.Summary.HasChanges() {
		remember(ctx, p)
		return c.verifyUnchanged(ctx, v, p, byName(bs))
	}
	if !*f.autoApprove && !c.confirm(ctx, command, question) {
		return exitError
	}
	return c.execute(ctx, v, p, byName(bs), *f.parallelism, remember)
}

// applySaved applies a saved plan after checking it against the specs it
// was made from and the live state: the backends must be the ones the
// specs and the environment resolve to now (credentials only ever go to
// those), and a plan made again from the specs must hold, for every change
// of the saved plan, exactly its requests. An edited or stale plan file
// is refused and nothing is sent.
func (c *cli) applySaved(ctx context.Context, path string, f *applyFlags) int {
	saved, err := provision.ReadPlanFile(path)
	if err != nil {
		c.applyView(f, nil).failed(refusal("Cannot read the saved plan", err.Error()+".", nil))
		return exitError
	}
	s, bs, diags := c.open(saved.Dir, &f.plan, true)
	v := c.applyView(f, s)
	if diags.HasErrors() {
		v.failed(diags)
		return exitError
	}
	if !saved.Summary.HasChanges() || len(saved.Changes) == 0 {
		// Nothing to apply (a saved plan never widens to what is planned
		// now), and still the proof of what readers see.
		v.plan(saved, nil)
		return c.verifyUnchanged(ctx, v, saved, byName(bs))
	}
	if diags := provision.Preflight(ctx, bs); diags.HasErrors() {
		v.failed(diags)
		return exitError
	}
	ctx, unlock, ok := c.lock(ctx, v, s, "apply", f)
	if !ok {
		return exitError
	}
	defer unlock()
	// The plan is made again exactly as plan made it (the same step: the
	// record's warnings, -target, the secrets), then held against the file.
	now, diags := c.makePlan(ctx, s, bs, &f.plan, provision.Converge)
	if diags.HasErrors() {
		v.failed(diags)
		return exitError
	}
	if why := matchSaved(saved, now.Redacted()); why != "" {
		v.failed(refusal("Saved plan cannot be applied", fmt.Sprintf("The saved plan %s cannot be applied. %s Nothing was sent. Make a new plan.", path, why), nil))
		return exitError
	}
	// The saved plan is redacted; the fresh one, which matches it, holds
	// the values to send.
	var addrs []provision.Addr
	for _, ch := range saved.Changes {
		addrs = append(addrs, ch.Addr)
	}
	if err := now.Target(addrs, nil); err != nil {
		v.failed(refusal("Saved plan cannot be applied", err.Error()+".", nil))
		return exitError
	}
	now.Dir = saved.Dir
	v.plan(now, diags)
	if !now.Summary.HasChanges() {
		return c.verifyUnchanged(ctx, v, now, byName(bs))
	}
	return c.execute(ctx, v, now, byName(bs), *f.parallelism, c.remember(v, s, &f.plan.net, provision.Converge))
}

// matchSaved checks a saved plan against the plan made now, both
// redacted, and says why it cannot be applied ("" when it can).
func matchSaved(saved, now *provision.Plan) string {
	if saved.FormatVersion != now.FormatVersion {
		return fmt.Sprintf("It was made by another version of provision (format %s; this one writes %s), whose requests are not comparable with this one's.", saved.FormatVersion, now.FormatVersion)
	}
	if saved.Project != now.Project {
		return fmt.Sprintf("It is a plan of project %q, and the specs in %s are project %q.", saved.Project, saved.Dir, now.Project)
	}
	live := map[string]provision.BackendInfo{}
	for _, b := range now.Backends {
		live[b.Name] = b
		if !slices.ContainsFunc(saved.Backends, func(sb provision.BackendInfo) bool { return sb.Name == b.Name }) {
			return fmt.Sprintf("The specs name the backend %s, which the plan does not.", b.Name)
		}
	}
	for _, b := range saved.Backends {
		cur, ok := live[b.Name]
		switch {
		case !ok:
			return fmt.Sprintf("It names the backend %s at %s, which the specs no longer declare: its objects cannot be read now, and the plan's requests there are not sent. "+
				"Plan again; the plan warns about what the project left there.", b.Name, b.Address)
		case cur.Kind != b.Kind || cur.Address != b.Address:
			return fmt.Sprintf("It names the backend %s at %s, but the specs and the environment resolve %s to %q. "+
				"Credentials are only ever sent to the backends the specs name.", b.Name, b.Address, b.Name, cur.Address)
		case compactJSON(cur.Scope) != compactJSON(b.Scope):
			return fmt.Sprintf("Its scope for %s (project, declared objects, datacenter) is %s, and the specs and the environment now give %s.", b.Name, compactJSON(b.Scope), compactJSON(cur.Scope))
		case cur.Fingerprint != b.Fingerprint:
			return fmt.Sprintf("The live state of %s (%s) changed since the plan was made, so its requests may no longer be right "+
				"(a plan is also stale once it has been applied).", b.Name, b.Address)
		}
	}
	planned := map[provision.Addr]*provision.Change{}
	for _, ch := range now.Changes {
		planned[ch.Addr] = ch
	}
	for _, ch := range saved.Changes {
		cur := planned[ch.Addr]
		if cur == nil || cur.Action != ch.Action || cur.Backend != ch.Backend || !sameRequests(cur.Requests, ch.Requests) {
			return fmt.Sprintf("Its change of %s is not what the specs in %s plan now against the same live state: "+
				"the plan file was edited, or the specs or the variables differ from the plan's (give apply the same -var and -var-file).", ch.Addr, saved.Dir)
		}
	}
	return ""
}

// compactJSON is raw without insignificant space, so that JSON indented in
// a saved plan compares with the compact form.
func compactJSON(raw json.RawMessage) string {
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return string(raw)
	}
	return buf.String()
}

func sameRequests(a, b []provision.Request) bool {
	return slices.EqualFunc(a, b, func(x, y provision.Request) bool {
		ja, _ := json.Marshal(x)
		jb, _ := json.Marshal(y)
		return string(ja) == string(jb)
	})
}

// execute applies the plan, with the view showing every request and, on
// a failure or an interrupt, what was done and what was not.
// remember returns what follows a complete apply: the record of the
// agents the project's services are now on (none after a destroy) is
// updated, so that a plan notices an agent block that goes away.
func (c *cli) remember(v applyView, s *specs, f *netFlags, mode provision.Mode) func(context.Context, *provision.Plan) {
	return func(ctx context.Context, p *provision.Plan) {
		k := c.clusterAgent(s, f)
		if k == nil {
			return
		}
		backends := p.Backends
		if mode == provision.Destroy {
			backends = nil
		}
		if err := k.Remember(ctx, p.Project, backends); err != nil {
			v.failed(hcl.Diagnostics{{Severity: hcl.DiagWarning, Summary: "Record not updated",
				Detail: fmt.Sprintf("The record of the project's agents (%s) was not updated: %s.", connect.RecordKey(p.Project), err)}})
		}
	}
}

// execute applies p, verifies what the backends can verify, side by side,
// and, when every request was sent, calls done.
func (c *cli) execute(ctx context.Context, v applyView, p *provision.Plan, backends map[string]provision.Backend, parallelism int, done func(context.Context, *provision.Plan)) int {
	total := 0
	for _, ch := range p.Changes {
		total += len(ch.Requests)
	}
	n := 0
	res := provision.Apply(ctx, p, backends, parallelism, func(e provision.Event) {
		if e.Done {
			n++
		}
		v.progress(e, n, total)
	})
	if res.Err() != nil || res.Stopped != nil {
		v.result(p, res, nil)
		return exitError
	}
	done(ctx, p)
	diags := c.verify(ctx, v, p, backends)
	v.result(p, res, diags)
	if diags.HasErrors() {
		return exitError
	}
	return exitOK
}

// verify runs what the backends can verify of an applied plan (the
// indices through the tribe node, the gates through the proxies), side by
// side, and shows their lines.
func (c *cli) verify(ctx context.Context, v applyView, p *provision.Plan, backends map[string]provision.Backend) hcl.Diagnostics {
	lines, diags := provision.Verify(ctx, p, backends)
	for _, l := range lines {
		v.verified(l.Backend, l.Line)
	}
	return diags
}

// verifyUnchanged ends an apply that had nothing to send: what was
// declared must still be what readers see (a gate a proxy serves open is
// no less open for a converged plan).
func (c *cli) verifyUnchanged(ctx context.Context, v applyView, p *provision.Plan, backends map[string]provision.Backend) int {
	if diags := c.verify(ctx, v, p, backends); diags.HasErrors() {
		v.result(p, provision.Result{}, diags)
		return exitError
	}
	return exitOK
}

// confirm asks for "yes" on a terminal; anywhere else it refuses, since a
// pipeline that waits for input would hang. An interrupt while it waits
// cancels.
func (c *cli) confirm(ctx context.Context, command, question string) bool {
	if !c.isTerminal(c.stdin) {
		fmt.Fprintf(c.stderr, "\nError: %s needs confirmation, and standard input is not a terminal.\n"+
			"Pass -auto-approve, or save a reviewed plan with plan -out=FILE and apply that file.\n", command)
		return false
	}
	fmt.Fprintf(c.stdout, "\n%s Only 'yes' will be accepted.\n  Enter a value: ", question)
	answer := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(c.stdin).ReadString('\n')
		answer <- line
	}()
	select {
	case line := <-answer:
		if strings.TrimSpace(line) == "yes" {
			return true
		}
		fmt.Fprintf(c.stderr, "\nCancelled: nothing was sent.\n")
	case <-ctx.Done():
		fmt.Fprintf(c.stderr, "\nCancelled (%s): nothing was sent.\n", context.Cause(ctx))
	}
	return false
}
