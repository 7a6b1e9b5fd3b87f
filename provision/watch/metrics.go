package watch

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/provision-dev/provision/provision"
	"github.com/provision-dev/provision/provision/plans"
)

// Metrics are the watcher's, in the Prometheus client's registry of its
// own (no process or Go metrics: they are the exporter's concern).
type Metrics struct {
	reg       *prometheus.Registry
	drifted   *prometheus.GaugeVec
	repairs   prometheus.Counter
	failed    prometheus.Counter
	fights    prometheus.Counter
	lastGood  prometheus.Gauge
	readFails prometheus.Counter
	proven    *prometheus.GaugeVec
	leader    prometheus.Gauge
}

// NewMetrics makes the metrics of one watcher.
func NewMetrics() *Metrics {
	m := &Metrics{
		reg:       prometheus.NewRegistry(),
		drifted:   prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "provision_drifted_objects", Help: "Objects whose live state differs from the specs, by backend, at the last reconcile."}, []string{"backend"}),
		repairs:   prometheus.NewCounter(prometheus.CounterOpts{Name: "provision_repairs_total", Help: "Repairs applied."}),
		failed:    prometheus.NewCounter(prometheus.CounterOpts{Name: "provision_repairs_failed_total", Help: "Repairs that failed."}),
		fights:    prometheus.NewCounter(prometheus.CounterOpts{Name: "provision_fights_total", Help: "Objects left alone because something kept changing them back."}),
		lastGood:  prometheus.NewGauge(prometheus.GaugeOpts{Name: "provision_last_reconcile_timestamp_seconds", Help: "When the last reconcile read every backend (Unix time)."}),
		readFails: prometheus.NewCounter(prometheus.CounterOpts{Name: "provision_reconcile_failures_total", Help: "Reconciles that could not read every backend or load the specs."}),
		proven:    prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "provision_gate_proven", Help: "1 when the last proof (after an apply, or on a quiet poll) proved every gate on the proxy, 0 when it did not."}, []string{"proxy"}),
		leader:    prometheus.NewGauge(prometheus.GaugeOpts{Name: "provision_leader", Help: "1 while this watcher is the project's healer."}),
	}
	m.reg.MustRegister(m.drifted, m.repairs, m.failed, m.fights, m.lastGood, m.readFails, m.proven, m.leader)
	return m
}

// Handler serves /metrics in the Prometheus text format and /healthz:
// 200 while the last good reconcile is younger than three polls and a
// minute (a watcher of specs with change feeds only polls SlowPoll times
// less often: an idle one is not stale).
func (m *Metrics) Handler(w *Watcher) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("/healthz", func(rw http.ResponseWriter, _ *http.Request) {
		if age := time.Since(w.LastGood()); age > 3*w.PollEvery()+time.Minute {
			http.Error(rw, "the last good reconcile is "+age.Round(time.Second).String()+" old", http.StatusServiceUnavailable)
			return
		}
		rw.Write([]byte("ok\n"))
	})
	return mux
}

func (m *Metrics) reconciled(ok bool, p *plans.Plan) {
	if m == nil {
		return
	}
	if !ok {
		m.readFails.Inc()
		return
	}
	m.lastGood.SetToCurrentTime()
	m.drifted.Reset()
	for _, b := range p.Backends {
		m.drifted.WithLabelValues(b.Name).Set(0)
	}
	for _, c := range p.Changes {
		if c.Action != plans.NoOp {
			m.drifted.WithLabelValues(c.Backend).Inc()
		}
	}
}

func (m *Metrics) repaired(ok bool) {
	if m == nil {
		return
	}
	if ok {
		m.repairs.Inc()
	} else {
		m.failed.Inc()
	}
}

func (m *Metrics) fight() {
	if m != nil {
		m.fights.Inc()
	}
}

// gate counts a proof: a gate a proxy proved.
func (m *Metrics) gate(v provision.Verified) {
	if m != nil && v.Gate != nil && v.Gate.Status == plans.Gated {
		m.proven.WithLabelValues(v.Gate.Proxy).Set(1)
	}
}

// gateFailed counts a proxy that did not prove its gates.
func (m *Metrics) gateFailed(u provision.Unproven) { m.unproven(u.Proxy) }

// unproven counts a proxy whose gates were not proven.
func (m *Metrics) unproven(proxy string) {
	if m != nil {
		m.proven.WithLabelValues(proxy).Set(0)
	}
}

// Leader sets whether this watcher leads.
func (m *Metrics) Leader(on bool) {
	if m == nil {
		return
	}
	if on {
		m.leader.Set(1)
	} else {
		m.leader.Set(0)
	}
}
