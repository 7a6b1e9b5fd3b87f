package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision"
)

// applyView shows an apply: the plan, one event per request, the outcome
// and its diagnostics. The engine only emits events (provision.Event);
// the human and the JSON views are two renderings of the same stream,
// chosen once from the flags.
type applyView interface {
	planView
	progress(e provision.Event, n, total int)
	verified(backend, message string)
	// result reports the end of the apply; failures reach it as
	// diagnostics whose range is the declaration that caused them.
	result(p *provision.Plan, res provision.Result, diags hcl.Diagnostics)
}

// outcomeDiagnostics turns a failed or stopped apply into diagnostics: one
// error per failed request, at its declaration, and one for a stop.
func outcomeDiagnostics(res provision.Result) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, o := range res.Outcomes {
		if o.Err == nil {
			continue
		}
		r := o.Change.Requests[o.Sent]
		d := &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Request failed",
			Detail: fmt.Sprintf("%s: request %d of %d (%s %s) failed: %s. No new request was started after it; requests under way finished. "+
				"This may converge on a re-run (a transport error, a timeout or a 5xx answer): what was done is live; run provision plan again to see what is left, and apply from there.",
				o.Change.Addr, o.Sent+1, len(o.Change.Requests), r.Method, r.Path, o.Err),
			Subject: o.Change.DeclRange(),
		}
		if _, refused := provision.Refused(o.Err); refused {
			d.Summary = "Request refused by the server"
			d.Detail = fmt.Sprintf("%s: request %d of %d (%s %s) was refused: %s. No new request was started after it; requests under way finished. "+
				"A refusal does not converge on a re-run: the next run sends the same request and gets the same answer. Change the declaration here (or the live object) so that the server accepts it, plan again, and apply; what was done before it is live.",
				o.Change.Addr, o.Sent+1, len(o.Change.Requests), r.Method, r.Path, o.Err)
		}
		diags = append(diags, d)
	}
	if res.Stopped != nil {
		what := "Apply interrupted"
		if errors.Is(res.Stopped, provision.ErrLockLost) {
			what = "Lock lost during apply"
		}
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  what,
			Detail: fmt.Sprintf("The apply stopped: %s. No new request was started; requests under way finished within their deadline. "+
				"What was done is live: run provision plan again to see what is left.", res.Stopped),
		})
	}
	return diags
}

func outcomeWord(o provision.Outcome) string {
	switch {
	case o.Complete():
		return "done"
	case o.Err != nil:
		return "failed"
	case o.Sent > 0:
		return "partial"
	}
	return "not done"
}

func completeLine(s provision.Summary) string {
	imported := ""
	if s.Import > 0 {
		imported = fmt.Sprintf("%d imported, ", s.Import)
	}
	return fmt.Sprintf("Apply complete: %s%d created, %d updated, %d deleted.", imported, s.Create, s.Update, s.Delete)
}

// humanApply prints one line per request on stdout and the report of a
// failure on stderr; on a terminal, one progress line on stderr instead,
// with counts, rate and time left.
type humanApply struct {
	textView
	live    bool // stderr is a terminal
	start   time.Time
	started bool
}

func (v *humanApply) progress(e provision.Event, n, total int) {
	if !v.started && !v.live {
		v.started = true
		fmt.Fprintln(v.c.stdout) // the requests' lines start under the plan
	}
	if !e.Done {
		return
	}
	if v.live {
		if v.start.IsZero() {
			v.start = time.Now().Add(-e.Elapsed)
		}
		elapsed := time.Since(v.start)
		rate := float64(n) / max(elapsed.Seconds(), 0.001)
		left := time.Duration(float64(total-n) / rate * float64(time.Second))
		fmt.Fprintf(v.c.stderr, "\r\x1b[K%d/%d requests sent, %.0f/s, %s left", n, total, rate, left.Round(time.Second))
		if e.Err == nil && n < total {
			return
		}
		fmt.Fprintln(v.c.stderr)
		if e.Err == nil {
			return
		}
	}
	status := "ok"
	if e.Err != nil {
		status = "FAILED"
	}
	fmt.Fprintf(v.c.stdout, "[%d/%d] %s: %s %s: %s (%s)\n", n, total, e.Change.Addr, e.Request.Method, provision.HideSecrets(e.Request.Path, v.c.secrets), status, e.Elapsed.Round(100*time.Microsecond))
}

func (v *humanApply) verified(_, message string) { fmt.Fprintf(v.c.stdout, "%s\n", message) }

func (v *humanApply) result(p *provision.Plan, res provision.Result, diags hcl.Diagnostics) {
	if res.Err() == nil && res.Stopped == nil {
		v.c.printDiags(diags, v.files, v.color)
		line := completeLine(p.Summary)
		if diags.HasErrors() {
			line = strings.Replace(line, "Apply complete:", "Every request sent, but the result is not verified:", 1)
		}
		fmt.Fprintf(v.c.stdout, "\n%s\n", line)
		return
	}
	fmt.Fprintln(v.c.stderr)
	v.c.printDiags(append(outcomeDiagnostics(res), diags...), v.files, v.color)
	fmt.Fprintf(v.c.stderr, "What was done and what was not:\n")
	groups := outcomesByBackend(res)
	for _, g := range groups {
		indent := "  "
		if len(groups) > 1 {
			fmt.Fprintf(v.c.stderr, "  %s (%s):\n", g.backend, backendAddress(p, g.backend))
			indent = "    "
		}
		for _, o := range g.outcomes {
			fmt.Fprintf(v.c.stderr, "%s%-9s %s (%d of %d requests sent)\n", indent, outcomeWord(o)+":", o.Change.Addr, o.Sent, len(o.Change.Requests))
		}
	}
}

// backendGroup is the outcomes of the changes of one backend.
type backendGroup struct {
	backend  string
	outcomes []provision.Outcome
}

// outcomesByBackend groups the outcomes by backend, in backend order, so
// that a failure on one agent of many says what each agent got.
func outcomesByBackend(res provision.Result) []backendGroup {
	var groups []backendGroup
	for _, o := range res.Outcomes {
		i := slices.IndexFunc(groups, func(g backendGroup) bool { return g.backend == o.Change.Backend })
		if i < 0 {
			groups = append(groups, backendGroup{backend: o.Change.Backend})
			i = len(groups) - 1
		}
		groups[i].outcomes = append(groups[i].outcomes, o)
	}
	slices.SortStableFunc(groups, func(a, b backendGroup) int { return strings.Compare(a.backend, b.backend) })
	return groups
}

func backendAddress(p *provision.Plan, name string) string {
	for _, b := range p.Backends {
		if b.Name == name {
			return b.Address
		}
	}
	return name
}

// jsonApply prints one JSON object per line and event, each with a type,
// as Terraform's machine-readable UI: plan, apply_start, apply_complete,
// apply_errored, outcome, verify, diagnostic, summary.
type jsonApply struct{ jsonView }

func (v jsonApply) event(typ string, fields map[string]any) {
	fields["type"] = typ
	b, _ := json.Marshal(fields)
	fmt.Fprintf(v.c.stdout, "%s\n", b)
}

func (v jsonApply) plan(p *provision.Plan, warnings hcl.Diagnostics) {
	v.diagnostics(warnings)
	v.event("plan", map[string]any{"plan": p.Redacted()})
}

func (v jsonApply) failed(diags hcl.Diagnostics) { v.diagnostics(diags) }

func (v jsonApply) diagnostics(diags hcl.Diagnostics) {
	for _, d := range provision.JSONDiagnostics(v.c.hide(diags)) {
		v.event("diagnostic", map[string]any{"diagnostic": d})
	}
}

func (v jsonApply) progress(e provision.Event, n, total int) {
	f := map[string]any{"address": e.Change.Addr, "action": e.Change.Action, "step": e.Step, "of": len(e.Change.Requests),
		"method": e.Request.Method, "path": provision.HideSecrets(e.Request.Path, v.c.secrets)}
	switch {
	case !e.Done:
		v.event("apply_start", f)
	case e.Err != nil:
		_, refused := provision.Refused(e.Err)
		f["error"], f["elapsed_ms"], f["refused"] = provision.HideSecrets(e.Err.Error(), v.c.secrets), e.Elapsed.Milliseconds(), refused
		v.event("apply_errored", f)
	default:
		f["n"], f["total"], f["elapsed_ms"] = n, total, e.Elapsed.Milliseconds()
		v.event("apply_complete", f)
	}
}

func (v jsonApply) verified(backend, message string) {
	v.event("verify", map[string]any{"backend": backend, "message": message})
}

func (v jsonApply) result(p *provision.Plan, res provision.Result, diags hcl.Diagnostics) {
	v.diagnostics(append(outcomeDiagnostics(res), diags...))
	for _, o := range res.Outcomes {
		v.event("outcome", map[string]any{"address": o.Change.Addr, "backend": o.Change.Backend, "status": outcomeWord(o), "sent": o.Sent, "requests": len(o.Change.Requests)})
	}
	status := "complete"
	switch {
	case res.Err() != nil:
		status = "failed"
	case res.Stopped != nil:
		status = "stopped"
	case diags.HasErrors():
		status = "unverified"
	}
	v.event("summary", map[string]any{"status": status, "import": p.Summary.Import, "create": p.Summary.Create,
		"update": p.Summary.Update, "delete": p.Summary.Delete})
}
