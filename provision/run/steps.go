package run

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision"
	"github.com/provision-dev/provision/provision/adapter"
	"github.com/provision-dev/provision/provision/addrs"
	"github.com/provision-dev/provision/provision/connect"
	"github.com/provision-dev/provision/provision/parallel"
	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/provision/policies"
	"github.com/provision-dev/provision/schema"
)

// step runs phase ph but lock, whose context replaces the run's once the
// lock is held (canceled if the lock is lost).
func (r *Run) step(ctx context.Context, ph Phase) hcl.Diagnostics {
	switch ph {
	case Load:
		return r.load(ctx)
	case Open:
		return r.open(ctx)
	case CheckPermissions:
		return r.checkPermissions(ctx)
	case Read:
		return r.read(ctx)
	case Diff:
		return r.plan(ctx)
	case CheckSaved:
		return r.checkSaved(ctx)
	case Confirm:
		return r.confirm(ctx)
	case Send:
		return r.send(ctx)
	case Record:
		return r.record(ctx)
	case Verify:
		return r.verify(ctx)
	case MakeConfig:
		return r.generate(ctx)
	case MakePolicy:
		return r.policy(ctx)
	case MakePull:
		return r.pull(ctx)
	case ReadHistory:
		return r.readHistory(ctx)
	}
	panic(fmt.Sprintf("run: no step for phase %s", ph))
}

// skips reports whether the run leaves out phase ph: a plan makes no
// declarations without -generate-config-out, a saved plan without
// changes is only verified (a saved plan never widens to what is planned
// now, and what readers see is still proven), and a plan without changes
// is neither confirmed nor sent.
func (r *Run) skips(ph Phase) bool {
	switch {
	case ph == MakeConfig:
		return r.GenerateConfigOut == ""
	case r.savedWithoutChanges():
		return ph > Open && ph != Verify
	case ph == Confirm || ph == Send:
		return !r.Plan.Summary.HasChanges()
	}
	return false
}

// savedWithoutChanges reports whether the run applies a saved plan that
// sends nothing.
func (r *Run) savedWithoutChanges() bool {
	return r.Saved != nil && (!r.Saved.Summary.HasChanges() || len(r.Saved.Changes) == 0)
}

// load reads the specs (and, for ApplySaved, first the saved plan, which
// names their directory). Nothing is asked of the live systems here: a
// spec that fails to load sends no request.
func (r *Run) load(ctx context.Context) hcl.Diagnostics {
	if r.Type == ApplySaved {
		saved, err := plans.ReadPlanFile(r.PlanFile, r.Language.Kinds())
		if err != nil {
			return Refusal("Cannot read the saved plan", err.Error()+".", nil)
		}
		if s := saved.Snapshot; s != nil {
			return Refusal("A plan made from a snapshot is never applied", fmt.Sprintf("%s was planned from the snapshot %s, taken %s, with no network: it shows what the live systems would have planned then, and they may have moved since. Nothing was sent. Plan against the live systems (provision plan -out FILE) and apply that plan.", r.PlanFile, s.File, s.TakenAt), nil)
		}
		r.Saved, r.Dir = saved, saved.Dir
		if saved.Destroy != nil { // made again as it was: of destroy
			r.DestroyPlan, r.Remove = true, *saved.Destroy
		}
		r.Excludes = append(r.Excludes, saved.LeftOut...) // made again without the agents it left out
	}
	if r.Specs != nil {
		r.parser, r.Config = r.Specs.Parser, r.Specs.Config
		diags := r.loadPolicies()
		r.view.Loaded(r.files(), r.Config.Secrets)
		return diags
	}
	if r.GenerateConfigOut != "" && r.GeneratedFile == "" {
		if _, err := os.Lstat(r.GenerateConfigOut); err == nil {
			return Refusal("Generated spec file exists",
				fmt.Sprintf("-generate-config-out names %s, which exists; provision never overwrites a file with generated declarations. Name a new file, or move this one away.", r.GenerateConfigOut), nil)
		}
	}
	r.parser = schema.NewParser(r.Language)
	// Until the declarations are generated, an import of an undeclared
	// object is what they are generated for, not an error.
	in := schema.Inputs{Vars: r.Vars, VarFiles: r.VarFiles, Env: r.Environ(), GenerateConfig: r.GenerateConfigOut != "" && r.GeneratedFile == ""}
	if r.Saved != nil { // made again with the values it was made with
		in.Saved = map[string][]byte{}
		for name, v := range r.Saved.Variables {
			if !v.Sensitive {
				in.Saved[name] = v.Value
			}
		}
	}
	var diags hcl.Diagnostics
	files, err := schema.SpecFiles(r.Dir)
	if err != nil || r.GeneratedFile == "" {
		r.Config, diags = r.parser.LoadDir(r.Dir, in)
	} else {
		if !slices.ContainsFunc(files, func(f string) bool { return sameFile(f, r.GeneratedFile) }) {
			files = append(files, r.GeneratedFile)
		}
		in.VarFiles = append(schema.AutoVarFiles(r.Dir), in.VarFiles...)
		r.Config, diags = r.parser.LoadFiles(files, in)
	}
	var secrets []string
	if r.Config != nil {
		secrets = r.Config.Secrets
	}
	if !diags.HasErrors() {
		diags = append(diags, r.loadPolicies()...)
	}
	r.view.Loaded(r.files(), secrets)
	return diags
}

// files are the sources the run's diagnostics quote: the specs' and the
// policies'.
func (r *Run) files() map[string]*hcl.File {
	if r.policyParser == nil {
		return r.parser.Files()
	}
	files := maps.Clone(r.parser.Files())
	maps.Copy(files, r.policyParser.Files())
	return files
}

// loadPolicies loads the run's policies, with the specs' parser so that
// their diagnostics quote them: a policy that does not load stops the run
// before anything is read.
func (r *Run) loadPolicies() hcl.Diagnostics {
	if len(r.Policies) == 0 {
		if len(r.PolicyOverrides) > 0 {
			return Refusal("Invalid -policy-override", "-policy-override lets a policy's failure through, and no policies are given (-policies, PROVISION_POLICIES).", nil)
		}
		return nil
	}
	var diags hcl.Diagnostics
	r.policyParser = schema.NewParser(r.Language) // apart from the specs': a saved plan's sources are the specs'
	r.policies, diags = policies.Load(r.Policies, r.policyParser, r.PolicyKinds)
	if r.policies != nil {
		if err := r.policies.Overridable(r.PolicyOverrides); err != nil {
			diags = append(diags, Refusal("Invalid -policy-override", err.Error()+".", nil)...)
		}
	}
	return diags
}

func sameFile(a, b string) bool {
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(sa, sb)
}

// open opens the backends and the cluster's agent, with every option
// given at construction.
func (r *Run) open(context.Context) hcl.Diagnostics {
	if len(r.Replace) > 0 {
		var err error
		if r.replace, err = resolve(r.Replace, r.Config.Declared()); err != nil {
			return Refusal("Invalid -replace address", err.Error()+".", nil)
		}
	}
	// A backend knows its objects by place, kind and name; the module
	// that declares one is the plan's.
	inBackend := make([]addrs.Addr, len(r.replace))
	for i, a := range r.replace {
		inBackend[i] = addrs.Addr{In: a.In, Kind: a.Kind, Name: a.Name}
	}
	if err := r.leaveOut(); err != nil {
		return Refusal("Invalid -exclude address", err.Error()+".", nil)
	}
	var diags hcl.Diagnostics
	r.Opened, diags = connect.Open(r.Config, connect.Options{Env: r.Getenv, Deadlines: r.Deadlines, Mode: r.mode(),
		Remove: r.Remove, Unplanned: r.Type == Policy, Replace: inBackend, LeftOut: r.leftOut, VerifyTimeout: cmp.Or(r.VerifyTimeout, DefaultVerifyTimeout), Others: r.Backends})
	if !diags.HasErrors() && r.savedWithoutChanges() {
		r.Plan = r.Saved
		r.view.Plan(r.Saved, nil)
	}
	return diags
}

// leaveOut takes, of the -exclude addresses, the places: the agents the
// run leaves out, which are neither read nor written (a node that is
// down). Only an agent can be left out so.
func (r *Run) leaveOut() error {
	r.leftOut = nil
	for _, a := range r.Excludes {
		if !a.IsPlace() {
			continue
		}
		if !strings.HasPrefix(a.In, "agent.") {
			return fmt.Errorf("-exclude %s: only an agent can be left out whole (a node that is down); leave out the other places' objects by their addresses", a)
		}
		if !slices.Contains(r.leftOut, a) {
			r.leftOut = append(r.leftOut, a)
		}
	}
	return nil
}

// leftOutNames are the backends' names of the agents the run leaves out.
func (r *Run) leftOutNames() []string { return addrs.Strings(r.leftOut) }

// checkPermissions asks the backends whether their credentials allow what
// the specs need, before the lock is taken and anything is sent. Only its
// errors count here: its warnings (permissions that cannot be checked)
// are the plan's too, which checks again for what it writes.
func (r *Run) checkPermissions(ctx context.Context) hcl.Diagnostics {
	include, exclude := r.Targets, r.Excludes
	if r.Saved != nil { // a saved plan sends its own changes, no more
		include = nil
		for _, c := range r.Saved.Changes {
			include = append(include, c.Addr)
		}
	}
	scope := func(a addrs.Addr) bool { return plans.Selected(a, include, exclude) }
	if diags := provision.Preflight(ctx, r.Opened.Backends, scope); diags.HasErrors() {
		return diags
	}
	return nil
}

// lock takes the project's lock on the cluster's agent; the rest of the
// run uses the lock's context, canceled if the lock is lost.
func (r *Run) lock(ctx context.Context) (context.Context, hcl.Diagnostics) {
	l := r.Opened.Cluster
	if len(r.Applied) > 0 && (!r.Lock || l == nil) {
		return ctx, Refusal("Nowhere to keep the history", "-record adds to the project's history, which is kept beside its lock in Consul: it needs the lock (no -lock=false) and a Consul agent to hold it (a consul or agent block, or CONSUL_HTTP_ADDR). Nothing was sent.", nil)
	}
	if !r.Lock {
		return ctx, nil
	}
	if l == nil {
		r.view.Diagnostics(hcl.Diagnostics{{Severity: hcl.DiagWarning, Summary: "Running without the lock",
			Detail: fmt.Sprintf("No Consul agent is configured to hold the lock, so this %s runs without one.", r.Type)}})
		return ctx, nil
	}
	lctx, unlock, err := l.Lock(ctx, r.Config.Project, r.Type.String(), r.LockTimeout)
	if err != nil {
		advice := "Try again later, or raise -lock-timeout."
		var why interface{ Advice() string }
		if errors.As(err, &why) {
			advice = why.Advice()
		} else if _, refused := adapter.Refused(err); refused {
			advice = fmt.Sprintf("The token may not take the lock: it needs session:write on the node of that agent and key:write on %s. Retrying will not help; provision policy prints the policy these specs need.", connect.LockKey(r.Config.Project))
		}
		return ctx, Refusal("Cannot take the lock", fmt.Sprintf("%s. Nothing was sent. %s", err, advice), r.Config.ProjectRange.Ptr())
	}
	r.unlock = unlock
	return lctx, nil
}

// read reads every backend once, and the cluster's record of the
// project's agents: the live state, as a value (or, with a snapshot, the
// value it recorded, and nothing is read).
func (r *Run) read(ctx context.Context) hcl.Diagnostics {
	if r.From != nil {
		var diags hcl.Diagnostics
		r.Live, diags = r.From.Live(r.Config.Project, r.Opened.Backends)
		return diags
	}
	mode := r.mode()
	var diags hcl.Diagnostics
	var record *plans.Record
	// The project's record beside the backends: it is one more read of
	// the cluster's agent, which none of them waits for.
	parallel.Do(2, 2, func(i int) {
		if i == 0 {
			r.Live, diags = provision.Read(ctx, mode, r.Opened.Backends)
		} else if k := r.Opened.Cluster; k != nil {
			record = k.Recorded(ctx, r.Config.Project)
		}
	})
	if diags.HasErrors() {
		return diags
	}
	r.Live.Record = record
	if b := r.Opened.Recalled(record); b != nil {
		st, rdiags := b.Read(ctx, mode)
		if rdiags.HasErrors() {
			return append(diags, rdiags...)
		}
		r.Live.States[b.Info().Name] = st
		diags = append(diags, rdiags...)
	}
	return diags
}

// mode is what the run's plan is for: destroy removes what the project
// owns, every other run converges.
func (r *Run) mode() plans.Mode {
	if r.Type == Destroy || r.DestroyPlan {
		return plans.Destroy
	}
	return plans.Converge
}

// plan plans from the live state, with no I/O (the engine finishes the
// plan: provision.Plan), and adds the warnings it was made with and the
// snapshot it was made from. Plan, apply DIR and destroy show it
// here; a saved plan's run shows it once checked.
func (r *Run) plan(context.Context) hcl.Diagnostics {
	r.partial = len(r.Targets) > 0 || len(r.Excludes) > 0
	o := provision.PlanOptions{Mode: r.mode(), Replace: r.replace, Targets: r.Targets, Excludes: r.Excludes,
		Whole: r.Type == Pull, Remove: connect.Removal(r.Remove), Permit: r.Type != ApplySaved, Dir: r.Dir, Files: r.parser.Files()}
	if k := r.Opened.Cluster; k != nil {
		o.Recorded = func(p *plans.Plan) hcl.Diagnostics {
			return k.Forgotten(r.Live.Record, p.Project, p.Backends, r.leftOutNames())
		}
	}
	p, diags := provision.Plan(r.Config, r.Opened.Backends, r.Live, o)
	if p != nil {
		r.Plan = p
	}
	if diags.HasErrors() {
		return diags // shown with the warnings before them
	}
	r.Warnings = append(r.Warnings, diags...) // shown with the plan
	var failed hcl.Diagnostics
	if r.Type != ApplySaved { // judged once narrowed to the saved plan's changes (checkSaved)
		failed = r.judge()
	}
	p.LeftOut = r.leftOut
	p.Diagnostics = plans.JSONDiagnostics(r.Warnings)
	p.Snapshot = r.From.Source()
	if r.Type != ApplySaved {
		r.show()
	}
	if r.Type == Plan { // saved all the same: apply holds it to the policies again
		r.PolicyFailures = failed
		return nil
	}
	return failed // a mandatory policy failed: nothing is sent
}

// judge holds the plan to the policies (none without): the results go
// into the plan, the advisory failures (and the overridden ones) into its
// warnings; it returns the mandatory failures.
func (r *Run) judge() hcl.Diagnostics {
	if r.policies == nil {
		return nil
	}
	var failed, pdiags hcl.Diagnostics
	r.Plan.Policies, pdiags = r.policies.Check(r.Plan, r.Config, r.PolicyOverrides)
	for _, d := range pdiags {
		if d.Severity == hcl.DiagError {
			failed = append(failed, d)
		} else {
			r.Warnings = append(r.Warnings, d)
		}
	}
	return failed
}

// show shows the plan with its warnings, once.
func (r *Run) show() {
	r.view.Plan(r.Plan, r.Warnings)
	r.Warnings = nil
}

// checkSaved holds the saved plan against the plan made now: an edited or
// stale plan file is refused and nothing is sent. The saved plan is
// redacted; the fresh one, narrowed to its changes, holds the values to
// send.
func (r *Run) checkSaved(ctx context.Context) hcl.Diagnostics {
	if name := provision.SensitiveMoved(r.Saved.Variables, r.Config.Variables); name != "" {
		return Refusal("Saved plan cannot be applied", fmt.Sprintf("The saved plan %s was made with another value of the sensitive var.%s than the one given now (its keyed digest in the plan differs; the value is never written). Nothing was sent. Give the value it was made with, or make a new plan.", r.PlanFile, name), nil)
	}
	if why := matchSaved(r.Saved, r.Plan.Redacted()); why != "" {
		return Refusal("Saved plan cannot be applied", fmt.Sprintf("The saved plan %s cannot be applied. %s Nothing was sent. Make a new plan.", r.PlanFile, why), nil)
	}
	var addrs []addrs.Addr
	for _, ch := range r.Saved.Changes {
		addrs = append(addrs, ch.Addr)
	}
	all := sending(r.Plan)
	if err := r.Plan.Target(addrs, nil); err != nil {
		return Refusal("Saved plan cannot be applied", err.Error()+".", nil)
	}
	r.partial = r.partial || sending(r.Plan) < all // made with -target or -exclude
	if failed := r.judge(); failed.HasErrors() {
		return failed // nothing is sent
	}
	permit := provision.Permit(r.Plan, r.Opened.Backends)
	if permit.HasErrors() {
		return permit
	}
	r.Warnings = append(r.Warnings, permit...)
	r.show()
	return nil
}

// sending counts the changes of p that send requests.
func sending(p *plans.Plan) int {
	n := 0
	for _, c := range p.Changes {
		if len(c.Requests) > 0 {
			n++
		}
	}
	return n
}

// confirm asks the view for approval, unless approved beforehand.
func (r *Run) confirm(ctx context.Context) hcl.Diagnostics {
	if r.AutoApprove {
		return nil
	}
	if !r.view.(Asker).Confirm(ctx, r.Plan) {
		return shown("not confirmed")
	}
	return nil
}

// send applies the plan, showing every request and, on a failure or an
// interrupt, what was done and what was not.
func (r *Run) send(ctx context.Context) hcl.Diagnostics {
	v := r.view
	total, n := 0, 0
	for _, ch := range r.Plan.Changes {
		total += len(ch.Requests)
	}
	r.Result = provision.Apply(ctx, r.Plan, r.senders(), r.Parallelism, func(e provision.Event) {
		if e.Done {
			n++
		}
		v.Progress(Progress{Event: e, Done: n, Total: total})
	})
	if r.Result.Err() != nil || r.Result.Stopped != nil {
		v.Result(r.Plan, r.Result, nil)
		return shown("the apply stopped")
	}
	return nil
}

// record keeps the agents the project's services are now on (none after
// a destroy), so that a plan notices an agent block that goes away, and
// adds the apply's entries to the project's history. A failure is a
// warning: everything was sent.
func (r *Run) record(ctx context.Context) hcl.Diagnostics {
	k := r.Opened.Cluster
	if k == nil {
		return nil
	}
	at := time.Now().UTC().Truncate(time.Second)
	entries := slices.Clone(r.Applied)
	for i := range entries {
		entries[i].At = at
	}
	if err := k.Append(ctx, r.Plan.Project, entries); err != nil {
		r.view.Diagnostics(hcl.Diagnostics{{Severity: hcl.DiagWarning, Summary: "History not kept",
			Detail: fmt.Sprintf("The history of the project's applies (%s) was not updated: %s.", connect.HistoryKey(r.Plan.Project), err)}})
	}
	backends := r.Plan.Backends
	if r.mode() == plans.Destroy {
		backends = nil
	}
	kept := r.leftOutNames()
	if r.partial {
		// What a partial apply did not send stays where the record says:
		// the catalog of external services whose blocks are gone, read
		// again by the next plan, which deletes them.
		for _, b := range r.Plan.Backends {
			kept = append(kept, b.Name)
		}
	}
	if err := k.Remember(ctx, r.Plan.Project, backends, kept); err != nil {
		r.view.Diagnostics(hcl.Diagnostics{{Severity: hcl.DiagWarning, Summary: "Record not updated",
			Detail: fmt.Sprintf("The record of the project's agents (%s) was not updated: %s.", connect.RecordKey(r.Plan.Project), err)}})
	}
	return nil
}

// verify runs what the backends can verify (the indices through the tribe
// node, the gates through the proxies), side by side, also when nothing
// was sent: a gate a proxy serves open is no less open for a converged
// plan.
func (r *Run) verify(ctx context.Context) hcl.Diagnostics {
	v := r.view
	lines, diags := provision.Verify(ctx, r.Plan, r.byName())
	for _, l := range lines {
		v.Verified(l)
	}
	if slices.Contains(r.Ran, Send) || diags.HasErrors() {
		v.Result(r.Plan, r.Result, diags)
	}
	if diags.HasErrors() {
		return shown("not what the readers see")
	}
	return nil
}

// generate makes the declarations of the undeclared imports, writes them
// to GenerateConfigOut, and loads and opens the specs again with them:
// the plan that follows reads them as it reads the specs. What the first
// load and the making warned of is said again by the second, or was of
// declarations that are now written.
func (r *Run) generate(ctx context.Context) hcl.Diagnostics {
	generated, diags := provision.GenerateConfig(ctx, r.Opened.Backends)
	if diags.HasErrors() || generated == nil {
		return diags
	}
	r.Generated = generated
	if err := writeNew(r.GenerateConfigOut, generated); err != nil {
		return Refusal("Cannot write the generated spec", err.Error()+".", nil)
	}
	r.GeneratedFile, r.Warnings = r.GenerateConfigOut, nil
	if diags = r.load(ctx); diags.HasErrors() {
		return diags
	}
	return append(diags, r.open(ctx)...)
}

// writeNew writes b to a file at path that must not exist.
func writeNew(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// policy makes the least-privilege ACL policy of the specs.
func (r *Run) policy(ctx context.Context) hcl.Diagnostics {
	var diags hcl.Diagnostics
	r.Policy, diags = connect.MakePolicy(ctx, r.Config, r.Opened, r.Node, r.Watch)
	return diags
}

// readHistory reads the project's history of applies from the cluster;
// a project without one keeps none.
func (r *Run) readHistory(ctx context.Context) hcl.Diagnostics {
	k := r.Opened.Cluster
	if k == nil {
		return nil
	}
	var err error
	if r.History, err = k.History(ctx, r.Config.Project); err != nil {
		advice := ""
		if _, refused := adapter.Refused(err); refused {
			advice = fmt.Sprintf(" The token needs key:read on %s (key:write to record an apply): provision policy prints the rules.", connect.HistoryKey(r.Config.Project))
		}
		return Refusal("Cannot read the history", fmt.Sprintf("Reading %s from %s: %s.%s", connect.HistoryKey(r.Config.Project), k.Address(), err, advice), r.Config.ProjectRange.Ptr())
	}
	return nil
}

// Prove proves, again, what the run's plan declares is what readers see
// (a gate through each declared proxy, with its accepted token where one
// is declared), as an apply's last phase does: what provision watch
// repeats on a poll with nothing to repair.
func (r *Run) Prove(ctx context.Context, p *plans.Plan) ([]provision.Verified, hcl.Diagnostics) {
	return provision.Verify(ctx, p, r.byName())
}

func (r *Run) byName() map[string]provision.Backend {
	m := map[string]provision.Backend{}
	for _, b := range r.Opened.Backends {
		m[b.Info().Name] = b
	}
	return m
}

// senders are the backends as an apply sends to them, by name.
func (r *Run) senders() map[string]provision.Sender {
	m := map[string]provision.Sender{}
	for _, b := range r.Opened.Backends {
		m[b.Info().Name] = b
	}
	return m
}

// resolve makes each address a user wrote the full address of the one
// object the specs declare that it names: written without its module
// (service.gated-api-1 for module.gated_api["edge"].service.gated-api-1)
// or its place, it names the one declared object of that kind and name;
// one that names none, or several, is an error listing the full
// addresses it might mean.
func resolve(written, declared []addrs.Addr) ([]addrs.Addr, error) {
	out := make([]addrs.Addr, 0, len(written))
	for _, a := range written {
		var found []addrs.Addr
		for _, full := range declared {
			if full.Matches(a) {
				found = append(found, full)
			}
		}
		switch len(found) {
		case 1:
			out = append(out, found[0])
		case 0:
			return nil, fmt.Errorf("%s names no object the specs declare", a)
		default:
			names := make([]string, len(found))
			for i, f := range found {
				names[i] = f.String()
			}
			return nil, fmt.Errorf("%s names %d objects the specs declare: write one of %s", a, len(found), strings.Join(names, ", "))
		}
	}
	return out, nil
}
