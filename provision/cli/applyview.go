package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision"
	"github.com/provision-dev/provision/provision/adapter"
	"github.com/provision-dev/provision/provision/addrs"
	"github.com/provision-dev/provision/provision/cli/render"
	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/provision/run"
)

// outcomeDiagnostics turns a failed or stopped apply into diagnostics: one
// error per failed request, at its declaration, and one for a stop.
func outcomeDiagnostics(res provision.Result) hcl.Diagnostics {
	var diags hcl.Diagnostics
	// One cause is told once: the changes whose request to one backend
	// failed the same way (the items of one refused or unanswered batch,
	// the writes under way when a server went away) share a diagnostic
	// that names them all.
	type cause struct{ backend, method, err string }
	var order []cause
	failed := map[cause][]provision.Outcome{}
	for _, o := range res.Outcomes {
		if o.Err == nil {
			continue
		}
		r := o.Change.Requests[o.Sent]
		c := cause{o.Change.Backend, r.Method, sameCause(o.Err.Error(), r.Path)}
		if failed[c] == nil {
			order = append(order, c)
		}
		failed[c] = append(failed[c], o)
	}
	for _, c := range order {
		group := failed[c]
		o := group[0]
		r := o.Change.Requests[o.Sent]
		what, request := o.Change.Addr.String(), fmt.Sprintf("request %d of %d (%s %s)", o.Sent+1, len(o.Change.Requests), r.Method, r.Path)
		var addrs plans.Addressed
		if len(group) > 1 {
			what = fmt.Sprintf("%d changes (%s)", len(group), addrList(group, 5))
			for _, o := range group {
				addrs = append(addrs, o.Change.Addr.String())
			}
			if slices.ContainsFunc(group, func(g provision.Outcome) bool { return g.Change.Requests[g.Sent].Path != r.Path }) {
				request = fmt.Sprintf("a %s request each (the first %s)", r.Method, r.Path)
			}
		}
		d := &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Request failed",
			Detail: fmt.Sprintf("%s: %s failed: %s. No new request was started after it; requests under way finished. "+
				"This may converge on a re-run (a transport error, a timeout or a 5xx answer): what was done is live; run provision plan again to see what is left, and apply from there.",
				what, request, o.Err),
			Subject: o.Change.DeclRange(),
			Extra:   addrs,
		}
		if _, refused := adapter.Refused(o.Err); refused {
			d.Summary = "Request refused by the server"
			d.Detail = fmt.Sprintf("%s: %s was refused: %s. No new request was started after it; requests under way finished. "+
				"A refusal does not converge on a re-run: the next run sends the same request and gets the same answer. Change the declaration here (or the live object) so that the server accepts it, plan again, and apply; what was done before it is live.",
				what, request, o.Err)
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

// sameCause is an error as it would read for any request to its backend:
// without the request's path or URL and the client's own address (a
// refused connection names the local port of each attempt).
func sameCause(err, path string) string {
	err = quotedURL.ReplaceAllString(err, "")
	if path != "" {
		err = strings.ReplaceAll(err, path, "")
	}
	return adapter.WithoutLocalAddrs(err)
}

var quotedURL = regexp.MustCompile(`"https?://[^"]*"`)

// addrList names the outcomes' objects, at most n of them, and how many
// more there are.
func addrList(group []provision.Outcome, n int) string {
	var names []string
	for _, o := range group[:min(n, len(group))] {
		names = append(names, o.Change.Addr.String())
	}
	if len(group) > n {
		names = append(names, fmt.Sprintf("and %d more", len(group)-n))
	}
	return strings.Join(names, ", ")
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

func completeLine(s plans.Summary) string {
	imported := ""
	if s.Import > 0 {
		imported = fmt.Sprintf("%d imported, ", s.Import)
	}
	forgotten := ""
	if s.Forget > 0 {
		forgotten = fmt.Sprintf(", %d forgotten", s.Forget)
	}
	return fmt.Sprintf("Apply complete: %s%d created, %d updated, %d deleted%s.", imported, s.Create, s.Update, s.Delete, forgotten)
}

// humanApply prints one line per request on stdout and the report of a
// failure on stderr; on a terminal, one progress line on stderr instead,
// with counts, rate and time left.
type humanApply struct {
	*textView
	live    bool // stderr is a terminal
	start   time.Time
	started bool
	// command and question are what a person is asked to approve.
	command, question string
	// failed is the last failure printed (its request and error), and
	// same how many failures since were that one again (the items of one
	// batch): said once, with their number.
	failed string
	same   int
	// waits is what was said of each backend's slow-downs.
	waits map[string]*slowDowns
}

// flush says how many failures repeated the last one printed.
func (v *humanApply) flush() {
	if v.same > 0 {
		what := "changes"
		if v.same == 1 {
			what = "change"
		}
		fmt.Fprintf(v.o.stdout, "  ... and %d more %s FAILED the same way\n", v.same, what)
	}
	v.failed, v.same = "", 0
}

func (v *humanApply) Progress(e run.Progress) {
	if !v.started && !v.live {
		v.started = true
		fmt.Fprintln(v.o.stdout) // the requests' lines start under the plan
	}
	if e.Wait > 0 {
		v.waiting(e)
		return
	}
	if !e.Event.Done {
		return
	}
	n, total := e.Done, e.Total
	if v.live {
		if v.start.IsZero() {
			v.start = time.Now().Add(-e.Elapsed)
		}
		elapsed := time.Since(v.start)
		rate := float64(n) / max(elapsed.Seconds(), 0.001)
		left := time.Duration(float64(total-n) / rate * float64(time.Second))
		fmt.Fprintf(v.o.stderr, "\r\x1b[K%d/%d requests sent, %.0f/s, %s left", n, total, rate, left.Round(time.Second))
		if e.Err == nil && n < total {
			return
		}
		fmt.Fprintln(v.o.stderr)
		if e.Err == nil {
			return
		}
	}
	status, key := "ok", ""
	if e.Err != nil {
		status, key = "FAILED", e.Change.Backend+" "+e.Request.Method+": "+sameCause(e.Err.Error(), e.Request.Path)
	}
	if key != "" && key == v.failed {
		v.same++
		return
	}
	v.flush()
	v.failed = key
	fmt.Fprintf(v.o.stdout, "[%d/%d] %s: %s %s: %s (%s)\n", n, total, e.Change.Addr, e.Request.Method, plans.HideSecrets(e.Request.Path, v.o.secrets), status, e.Elapsed.Round(100*time.Microsecond))
}

// waiting says that a server asked to slow down and how long the request
// waits: at most once a second for each backend, with how many requests
// it asked to wait since it was last said, so that a limit that refuses
// many requests at once is a line, not a flood.
func (v *humanApply) waiting(e run.Progress) {
	if v.waits == nil {
		v.waits = map[string]*slowDowns{}
	}
	w := v.waits[e.Change.Backend]
	if w == nil {
		w = &slowDowns{}
		v.waits[e.Change.Backend] = w
	}
	w.n++
	if time.Since(w.said) < time.Second {
		return
	}
	others := ""
	if w.n > 1 {
		others = fmt.Sprintf(" (%d requests told to wait since the last line)", w.n)
	}
	if v.live {
		fmt.Fprint(v.o.stderr, "\r\x1b[K")
	}
	fmt.Fprintf(v.o.stdout, "[%d/%d] %s: %s %s: the server says slow down (%s): waiting %s%s\n", e.Done, e.Total, e.Change.Addr, e.Request.Method,
		plans.HideSecrets(e.Request.Path, v.o.secrets), plans.HideSecrets(e.Err.Error(), v.o.secrets), e.Wait.Round(time.Millisecond), others)
	w.said, w.n = time.Now(), 0
}

// slowDowns is what was said of one backend's slow-downs: when, and how
// many requests it has asked to wait since.
type slowDowns struct {
	said time.Time
	n    int
}

func (v *humanApply) Verified(l provision.Verified) { fmt.Fprintf(v.o.stdout, "%s\n", l.Line) }

func (v *humanApply) Result(p *plans.Plan, res provision.Result, diags hcl.Diagnostics) {
	v.flush()
	if res.Err() == nil && res.Stopped == nil {
		v.o.printDiags(diags, v.files, v.color)
		line := completeLine(p.Summary)
		if diags.HasErrors() {
			line = strings.Replace(line, "Apply complete:", "Every request sent, but the result is not verified:", 1)
		}
		fmt.Fprintf(v.o.stdout, "\n%s\n%s", line, render.Outputs(p))
		return
	}
	fmt.Fprintln(v.o.stderr)
	v.o.printDiags(append(outcomeDiagnostics(res), diags...), v.files, v.color)
	fmt.Fprintf(v.o.stderr, "What was done and what was not:\n")
	groups := outcomesByBackend(res)
	for _, g := range groups {
		indent := "  "
		if len(groups) > 1 {
			fmt.Fprintf(v.o.stderr, "  %s (%s):\n", g.backend, backendAddress(p, g.backend))
			indent = "    "
		}
		for _, o := range g.outcomes {
			fmt.Fprintf(v.o.stderr, "%s%-9s %s (%d of %d requests sent)\n", indent, outcomeWord(o)+":", o.Change.Addr, o.Sent, len(o.Change.Requests))
		}
	}
}

var (
	_ run.View  = (*humanApply)(nil)
	_ run.Asker = (*humanApply)(nil)
	_ run.View  = (*jsonApply)(nil)
)

// Confirm asks for "yes" on standard input, as Terraform does: from a
// terminal, or from a pipe (echo yes | provision apply); an input that
// ends first cancels (-input=false is refused before, by the run). An
// interrupt while it waits cancels.
func (v *humanApply) Confirm(ctx context.Context, _ *plans.Plan) bool {
	o := v.o
	fmt.Fprintf(o.stdout, "\n%s Only 'yes' will be accepted.\n  Enter a value: ", v.question)
	answer := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(o.stdin).ReadString('\n')
		answer <- line
	}()
	select {
	case line := <-answer:
		if strings.TrimSpace(line) == "yes" {
			return true
		}
		fmt.Fprintf(o.stderr, "\nCancelled: nothing was sent.\n")
	case <-ctx.Done():
		fmt.Fprintf(o.stderr, "\nCancelled (%s): nothing was sent.\n", context.Cause(ctx))
	}
	return false
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

func backendAddress(p *plans.Plan, name string) string {
	for _, b := range p.Backends {
		if b.Name == name {
			return b.Address
		}
	}
	return name
}

// jsonApply prints one JSON object per line and event, each with a type,
// as Terraform's machine-readable UI: diagnostic, plan, apply_start,
// apply_complete, apply_errored, verify, outcome, summary. Each event is
// one of the structs below.
type jsonApply struct{ *jsonView }

type (
	diagnosticEvent struct {
		Type       string           `json:"type"`
		Diagnostic plans.Diagnostic `json:"diagnostic"`
	}
	planEvent struct {
		Type string      `json:"type"`
		Plan *plans.Plan `json:"plan"`
	}
	// requestEvent is apply_start, apply_complete (with n, total and
	// elapsed_ms) and apply_errored (with error, refused and elapsed_ms).
	requestEvent struct {
		Type      string       `json:"type"`
		Address   addrs.Addr   `json:"address"`
		Action    plans.Action `json:"action"`
		Step      int          `json:"step"`
		Of        int          `json:"of"`
		Method    string       `json:"method"`
		Path      string       `json:"path"`
		N         int          `json:"n,omitempty"`
		Total     int          `json:"total,omitempty"`
		Error     string       `json:"error,omitempty"`
		Refused   *bool        `json:"refused,omitempty"`
		ElapsedMS *int64       `json:"elapsed_ms,omitempty"`
		// WaitMS (apply_waiting) is the pause a server that limits its
		// rate asked for before the request is sent again.
		WaitMS *int64 `json:"wait_ms,omitempty"`
	}
	verifyEvent struct {
		Type    string `json:"type"`
		Backend string `json:"backend"`
		Message string `json:"message"`
	}
	outcomeEvent struct {
		Type     string     `json:"type"`
		Address  addrs.Addr `json:"address"`
		Backend  string     `json:"backend"`
		Status   string     `json:"status"`
		Sent     int        `json:"sent"`
		Requests int        `json:"requests"`
	}
	summaryEvent struct {
		Type   string `json:"type"`
		Status string `json:"status"`
		Import int    `json:"import"`
		Create int    `json:"create"`
		Update int    `json:"update"`
		Delete int    `json:"delete"`
		Forget int    `json:"forget"`
	}
)

func (v *jsonApply) event(e any) {
	b, _ := json.Marshal(e)
	fmt.Fprintf(v.o.stdout, "%s\n", b)
}

func (v *jsonApply) Plan(p *plans.Plan, warnings hcl.Diagnostics) {
	v.Diagnostics(warnings)
	v.event(planEvent{"plan", p.Redacted()})
}

func (v *jsonApply) Diagnostics(diags hcl.Diagnostics) {
	for _, d := range plans.JSONDiagnostics(v.o.hide(diags)) {
		v.event(diagnosticEvent{"diagnostic", d})
	}
}

func (v *jsonApply) Progress(e run.Progress) {
	ev := requestEvent{Type: "apply_start", Address: e.Change.Addr, Action: e.Change.Action, Step: e.Step, Of: len(e.Change.Requests),
		Method: e.Request.Method, Path: plans.HideSecrets(e.Request.Path, v.o.secrets)}
	if e.Event.Done {
		ms := e.Elapsed.Milliseconds()
		ev.ElapsedMS = &ms
	}
	switch {
	case e.Wait > 0:
		ms := e.Wait.Milliseconds()
		ev.Type, ev.Error, ev.WaitMS = "apply_waiting", plans.HideSecrets(e.Err.Error(), v.o.secrets), &ms
	case !e.Event.Done:
	case e.Err != nil:
		_, refused := adapter.Refused(e.Err)
		ev.Type, ev.Error, ev.Refused = "apply_errored", plans.HideSecrets(e.Err.Error(), v.o.secrets), &refused
	default:
		ev.Type, ev.N, ev.Total = "apply_complete", e.Done, e.Total
	}
	v.event(ev)
}

func (v *jsonApply) Verified(l provision.Verified) { v.event(verifyEvent{"verify", l.Backend, l.Line}) }

func (v *jsonApply) Result(p *plans.Plan, res provision.Result, diags hcl.Diagnostics) {
	v.Diagnostics(append(outcomeDiagnostics(res), diags...))
	for _, o := range res.Outcomes {
		v.event(outcomeEvent{"outcome", o.Change.Addr, o.Change.Backend, outcomeWord(o), o.Sent, len(o.Change.Requests)})
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
	v.event(summaryEvent{"summary", status, p.Summary.Import, p.Summary.Create, p.Summary.Update, p.Summary.Delete, p.Summary.Forget})
}
