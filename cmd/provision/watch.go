package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/provision-dev/provision/provision"
	"github.com/provision-dev/provision/provision/watch"
)

// watchCmd is provision watch: plan (or with -heal apply) once like plan
// and apply, then again whenever the live systems or the specs change.
func (c *cli) watchCmd(args []string) int {
	fs := c.flagSet("watch", "watch [options] [DIR]")
	heal := fs.Bool("heal", false, "apply the plan of what drifted, under the lock (without it, drift is only reported)")
	interval := fs.Duration("interval", watch.DefaultInterval, "poll the search clusters and proxies, which have no change feed, this often (with jitter)")
	buffer := fs.String("buffer", fmt.Sprintf("%s,%s", watch.DefaultBufferMin, watch.DefaultBufferMax), "`MIN,MAX`: wait for MIN of quiet after a change, MAX at most, before one reconcile")
	maxRepairs := fs.Int("max-repairs", watch.DefaultMaxRepairs, "leave an object alone after this many repairs within -repair-window (something fights provision)")
	window := fs.Duration("repair-window", watch.DefaultWindow, "the window of -max-repairs")
	listen := fs.String("listen", "", "serve /metrics (Prometheus text format) and /healthz on `ADDR`")
	jsonOut := fs.Bool("json", false, "log one JSON object per event")
	lockTimeout := fs.Duration("lock-timeout", time.Minute, "wait this long for the project's lock held by another run before a repair")
	parallelism := fs.Int("parallelism", 10, "send the requests of at most `N` objects at a time")
	// A plan's flags but -timeout (a watch runs until stopped), -target
	// and -replace (a watch repairs what drifted, and a replace would
	// drift for ever).
	var pf planFlags
	pf.net.request = fs.Duration("request-timeout", provision.DefaultDeadlines.Request, "give up one request to a server after this long")
	pf.prune = fs.Bool("prune-indices", false, "also delete the project's indices that the specs no longer declare")
	pf.vars.register(fs)
	fs.Var(&pf.excludes, "exclude", "never plan or repair this object (repeatable)")
	fs.DurationVar(&pf.verifyTimeout, "verify-timeout", 30*time.Second, "wait this long for each declared traefik proxy to prove the gate after a repair")
	pos, code, ok := c.parse(fs, args, 1, nil)
	if !ok {
		return code
	}
	lo, hi, found := strings.Cut(*buffer, ",")
	bmin, err1 := time.ParseDuration(lo)
	bmax, err2 := time.ParseDuration(hi)
	if !found || err1 != nil || err2 != nil || bmin <= 0 || bmax < bmin {
		fmt.Fprintf(c.stderr, "provision watch: -buffer %q is not MIN,MAX with 0 < MIN <= MAX, as in 500ms,5s\n", *buffer)
		return exitError
	}
	var mu sync.Mutex
	logf := func(e watch.Event) {
		mu.Lock()
		defer mu.Unlock()
		if *jsonOut {
			b, _ := json.Marshal(e)
			fmt.Fprintf(c.stdout, "%s\n", b)
			return
		}
		addr := ""
		if e.Address != "" {
			addr = e.Address + ": "
		}
		fmt.Fprintf(c.stdout, "%s %-5s %-10s %s%s\n", e.Time.Format(time.RFC3339), e.Level, e.Kind, addr, e.Message)
	}
	base := c.operation(0, dirArg(pos), &pf)
	base.LockTimeout, base.Parallelism, base.Lock = *lockTimeout, *parallelism, true
	metrics := watch.NewMetrics()
	var lead watch.Leadership
	leads := lead.Held
	w := watch.New(watch.Options{Base: base, Heal: *heal, Interval: *interval, BufferMin: bmin, BufferMax: bmax,
		MaxRepairs: *maxRepairs, Window: *window, Log: logf, Metrics: metrics}, func() bool { return leads() })

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	specs, diags := w.Load()
	if diags.HasErrors() {
		logf(watch.Event{Time: time.Now().UTC(), Level: "error", Kind: "stop", Message: "the specs do not load: " + diags.Error()})
		return exitError
	}
	cfg := specs.Config
	var wg sync.WaitGroup
	if *listen != "" {
		ln, err := net.Listen("tcp", *listen)
		if err != nil {
			logf(watch.Event{Time: time.Now().UTC(), Level: "error", Kind: "stop", Message: fmt.Sprintf("-listen %s: %s", *listen, err)})
			return exitError
		}
		srv := &http.Server{Handler: metrics.Handler(w, 3*(*interval)+time.Minute), ReadHeaderTimeout: 5 * time.Second}
		go srv.Serve(ln)
		defer srv.Close()
		logf(watch.Event{Time: time.Now().UTC(), Level: "info", Kind: "listen", Message: "serving /metrics and /healthz on http://" + ln.Addr().String()})
	}
	agents := watch.Agents(cfg, c.getenv)
	if *heal && len(agents) > 0 {
		cluster := c.getenv("CONSUL_HTTP_ADDR")
		if cfg.Consul != nil && cfg.Consul.Address != "" {
			cluster = cfg.Consul.Address
		} else if cluster == "" {
			cluster = agents[0]
		}
		if client, err := watch.Client(cluster); err == nil {
			wg.Add(1)
			go func() {
				defer wg.Done()
				lead.Run(ctx, client, cfg.Project, func(on bool) {
					metrics.Leader(on)
					if on {
						logf(watch.Event{Time: time.Now().UTC(), Level: "info", Kind: "leader", Message: "this watcher leads project " + cfg.Project + " and heals"})
						w.Wake("leadership")
					} else {
						logf(watch.Event{Time: time.Now().UTC(), Level: "warn", Kind: "leader", Message: "this watcher no longer leads; it reports"})
					}
				}, func(format string, args ...any) {
					logf(watch.Event{Time: time.Now().UTC(), Level: "warn", Kind: "leader", Message: fmt.Sprintf(format, args...)})
				})
			}()
		}
		// The first run heals as the leader: wait a moment for the lock.
		for deadline := time.Now().Add(3 * time.Second); !lead.Held() && time.Now().Before(deadline) && ctx.Err() == nil; {
			time.Sleep(50 * time.Millisecond)
		}
		if !lead.Held() {
			logf(watch.Event{Time: time.Now().UTC(), Level: "info", Kind: "follower", Message: "this watcher does not lead project " + cfg.Project + ": it reports, and the leader heals"})
		}
	} else if *heal {
		// No Consul to elect through: this watcher heals alone, as apply
		// without an agent runs unlocked.
		leads = func() bool { return true }
		metrics.Leader(true)
		logf(watch.Event{Time: time.Now().UTC(), Level: "warn", Kind: "leader", Message: "no Consul agent in the specs or the environment: no leader election, so run one watcher of this project"})
	} else {
		metrics.Leader(false)
	}
	if err := w.Once(ctx, specs); err != nil {
		logf(watch.Event{Time: time.Now().UTC(), Level: "error", Kind: "stop", Message: err.Error()})
		stop()
		wg.Wait()
		return exitError
	}
	for _, a := range agents {
		wg.Add(1)
		go func() { defer wg.Done(); w.FollowAgent(ctx, a) }()
	}
	for _, f := range []func(context.Context){w.Poll, w.FollowSpecs, w.Loop} {
		wg.Add(1)
		go func() { defer wg.Done(); f(ctx) }()
	}
	<-ctx.Done()
	logf(watch.Event{Time: time.Now().UTC(), Level: "info", Kind: "stop", Message: "stopping: the current repair finishes or stops, the lock and the leader session are released"})
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		logf(watch.Event{Time: time.Now().UTC(), Level: "error", Kind: "stop", Message: "not stopped within 5s"})
		return exitError
	}
	return exitOK
}
