package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/provision-dev/provision/provision/adapter"
	"github.com/provision-dev/provision/provision/run"
	"github.com/provision-dev/provision/provision/watch"
)

// watchCmd is provision watch: plan (or with -heal apply) once like plan
// and apply, then again whenever the live systems or the specs change.
func (c *cli) watchCmd(args []string) int {
	fs := c.flagSet("watch")
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
	pf.net.request = fs.Duration("request-timeout", adapter.DefaultDeadlines.Request, "give up one request to a server after this long")
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
	base := c.operation(run.Plan, dirArg(pos), &pf)
	base.LockTimeout, base.Parallelism, base.Lock = *lockTimeout, *parallelism, true
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := watch.Run(ctx, watch.Options{Base: base, Heal: *heal, Interval: *interval, BufferMin: bmin, BufferMax: bmax,
		MaxRepairs: *maxRepairs, Window: *window, Log: logf, Metrics: watch.NewMetrics(), Listen: *listen})
	if err != nil {
		return exitError
	}
	return exitOK
}
