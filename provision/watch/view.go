package watch

import (
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision"
	"github.com/provision-dev/provision/provision/run"
)

// view is the run.ApplyView of the watcher's plans and repairs: each
// thing a run reports is one event of the log (a diagnostic only while
// it is new), every value the specs hold as secret hidden.
type view struct {
	w        *Watcher
	secrets  []string
	applying bool
}

var _ run.ApplyView = (*view)(nil)

func (v *view) Loaded(_ map[string]*hcl.File, secrets []string) { v.secrets = secrets }

func (v *view) redact(s string) string {
	for _, sec := range v.secrets {
		if sec != "" {
			s = strings.ReplaceAll(s, sec, "(sensitive)")
		}
	}
	return s
}

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
		if d.Summary == "Gate not proven" {
			v.w.o.Metrics.gateFailed(d.Detail)
		}
		// The same trouble at the same place is one report, though its
		// detail may differ from one reconcile to the next (a port, a time).
		key := level + d.Summary + at
		if at == "" {
			key += d.Detail
		}
		if v.w.firstReport(key) {
			v.w.log(level, "diagnostic", "", "%s", v.redact(d.Summary+": "+d.Detail+at))
		}
	}
}

// Plan reports nothing itself: the watcher logs what drifted.
func (v *view) Plan(*provision.Plan, hcl.Diagnostics) {}

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
	v.w.o.Metrics.gate(ver.Line)
}

func (v *view) Result(p *provision.Plan, res provision.Result, diags hcl.Diagnostics) {
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
