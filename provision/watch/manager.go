package watch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/provision-dev/provision/provision"
	"github.com/provision-dev/provision/provision/connect"
)

// ErrStopped is what Run returns when the watch stopped on an error; the
// log said why.
var ErrStopped = errors.New("the watch stopped on an error")

// ShutdownTimeout bounds how long a watch takes to stop once asked.
const ShutdownTimeout = 5 * time.Second

// Run is one provision watch as a whole, as controller-runtime's Manager
// is: it loads the specs, serves the metrics (Options.Listen), takes
// part in the election of the project's healer when it heals, reconciles
// once, then follows every change feed the backends have (the Consul
// agents' catalogs, the keys' folders), polls those without one, follows
// the spec files, and reconciles after each change, until ctx ends. It
// then stops within ShutdownTimeout: the repair under way finishes or
// stops, and the lock and the leader's session are released.
func Run(ctx context.Context, o Options) error {
	var leads atomic.Bool
	alone := false // no Consul to elect through: heal alone
	w := New(o, func() bool { return alone || leads.Load() })
	stop := func(format string, args ...any) error {
		w.log("error", "stop", "", format, args...)
		return ErrStopped
	}
	specs, diags := w.Load()
	if diags.HasErrors() {
		return stop("the specs do not load: %s", diags.Error())
	}
	cfg := specs.Config
	b := o.Base
	getenv := b.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	opened, odiags := connect.Open(cfg, connect.Options{Env: getenv, Deadlines: b.Deadlines, Unplanned: true, Others: b.Backends})
	if odiags.HasErrors() {
		return stop("the backends cannot be opened: %s", odiags.Error())
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	goRun := func(f func()) {
		wg.Add(1)
		go func() { defer wg.Done(); f() }()
	}
	if o.Listen != "" {
		ln, err := net.Listen("tcp", o.Listen)
		if err != nil {
			return stop("-listen %s: %s", o.Listen, err)
		}
		srv := &http.Server{Handler: o.Metrics.Handler(w), ReadHeaderTimeout: 5 * time.Second}
		go srv.Serve(ln)
		defer srv.Close()
		w.log("info", "listen", "", "serving /metrics and /healthz on http://%s", ln.Addr())
	}
	switch k := opened.Cluster; {
	case o.Heal && k != nil:
		first := make(chan struct{})
		var once sync.Once
		goRun(func() {
			k.Elect(ctx, cfg.Project, func(on bool) {
				w.electionFails.Store(false)
				leads.Store(on)
				o.Metrics.Leader(on)
				if on {
					once.Do(func() { close(first) })
					w.log("info", "leader", "", "this watcher leads project %s and heals", cfg.Project)
					w.Wake("leadership")
				} else {
					w.log("warn", "leader", "", "this watcher no longer leads; it reports")
				}
			}, func(format string, args ...any) {
				// Refused (the token may not write the key): no watcher
				// with it can lead. A passing error is only logged.
				msg := fmt.Sprintf(format, args...)
				if strings.Contains(msg, "403") || strings.Contains(strings.ToLower(msg), "permission denied") {
					w.electionFails.Store(true)
				}
				w.log("warn", "leader", "", "%s", msg)
			})
		})
		// The first run heals as the leader: wait a moment for the lock.
		select {
		case <-first:
		case <-ctx.Done():
		case <-time.After(3 * time.Second):
			w.follower(cfg.Project)
		}
	case o.Heal:
		alone = true
		o.Metrics.Leader(true)
		w.log("warn", "leader", "", "no Consul agent in the specs or the environment: no leader election, so run one watcher of this project")
	default:
		o.Metrics.Leader(false)
	}
	if err := w.Once(ctx, specs); err != nil {
		cancel()
		wg.Wait()
		return stop("%s", err)
	}
	feed := provision.Feed{Changed: w.Wake, Back: w.agentBack, Log: func(level, format string, args ...any) { w.log(level, "feed", "", format, args...) }}
	for _, bk := range opened.Backends {
		goRun(func() { bk.Follow(ctx, feed) })
	}
	for _, f := range []func(context.Context){w.Poll, w.FollowSpecs, w.Loop} {
		goRun(func() { f(ctx) })
	}
	<-ctx.Done()
	w.log("info", "stop", "", "stopping: the current repair finishes or stops, the lock and the leader session are released")
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-time.After(ShutdownTimeout):
		return stop("not stopped within %s", ShutdownTimeout)
	}
}
