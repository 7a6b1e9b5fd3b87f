package watch

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision"
	"github.com/provision-dev/provision/provision/adapter"
	"github.com/provision-dev/provision/provision/addrs"
	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/provision/run"
)

// view is the run.View of the watcher's plans and repairs: each
// thing a run reports is one event of the log (a diagnostic only while
// it is new), every value the specs hold as secret hidden.
type view struct {
	run.Silent // nothing to do after a phase
	w          *Watcher
	secrets    []string
	applying   bool
	// denied are the objects the credentials may not write, as the
	// errors say; others counts the other errors.
	denied []addrs.Addr
	others int
}

var _ run.View = (*view)(nil)

func (v *view) Loaded(_ map[string]*hcl.File, secrets []string) { v.secrets = secrets }

func (v *view) redact(s string) string { return plans.HideSecrets(s, v.secrets) }

func (v *view) Diagnostics(diags hcl.Diagnostics) {
	for _, d := range diags {
		level := "warn"
		if d.Severity == hcl.DiagError {
			level = "error"
		}
		at := ""
		if d.Subject != nil {
			at = " (" + d.Subject.String() + ")"
		}
		if u, ok := d.Extra.(provision.Unproven); ok {
			v.w.o.Metrics.gateFailed(u)
		}
		if denied, ok := d.Extra.(provision.Denied); ok && len(denied.Addrs) > 0 {
			v.denied = append(v.denied, denied.Addrs...)
		} else if d.Severity == hcl.DiagError {
			v.others++
		}
		// The same trouble is one report, though a transport error names
		// another local port each time.
		if v.w.firstReport(level + d.Summary + at + adapter.WithoutLocalAddrs(d.Detail)) {
			v.w.log(level, "diagnostic", "", "%s", v.redact(d.Summary+": "+d.Detail+at))
		}
	}
}

// Plan reports the plan's warnings (a rogue router, an owned index no
// longer declared); the watcher logs what drifted itself.
func (v *view) Plan(_ *plans.Plan, warnings hcl.Diagnostics) { v.Diagnostics(warnings) }

func (v *view) Progress(p run.Progress) {
	if !p.Event.Done {
		return
	}
	status := "ok"
	if p.Err != nil {
		status = v.redact(p.Err.Error())
	}
	v.w.log("info", "sent", p.Change.Addr.String(), "[%d/%d] %s %s: %s (%s)", p.Done, p.Total, p.Request.Method, p.Request.Path, status, p.Elapsed.Round(100_000))
}

func (v *view) Verified(ver provision.Verified) {
	v.w.log("info", "verify", "", "%s", v.redact(ver.Line))
	v.w.o.Metrics.gate(ver)
}

func (v *view) Result(p *plans.Plan, res provision.Result, diags hcl.Diagnostics) {
	v.Diagnostics(diags)
	done, failed, notDone := 0, 0, 0
	for _, o := range res.Outcomes {
		switch {
		case o.Complete():
			done++
		case o.Err != nil:
			failed++
		default:
			notDone++
		}
	}
	v.w.log("info", "repaired", "", "%s", fmt.Sprintf("%d done, %d failed, %d not done", done, failed, notDone))
}
