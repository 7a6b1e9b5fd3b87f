package cli

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

	"github.com/provision-dev/provision/provision/run"
	"github.com/provision-dev/provision/provision/watch"
)

// watchCmd is provision watch: plan (or with -heal apply) once like plan
// and apply, then again whenever the live systems or the specs change.
func (c *cli) watchCmd(args []string) int {
	var a watchArgs
	pos, code, ok := c.args("watch", &a, args, 1, nil)
	if !ok {
		return code
	}
	lo, hi, found := strings.Cut(a.buffer, ",")
	bmin, err1 := time.ParseDuration(lo)
	bmax, err2 := time.ParseDuration(hi)
	if !found || err1 != nil || err2 != nil || bmin <= 0 || bmax < bmin {
		fmt.Fprintf(c.stderr, "provision watch: -buffer %q is not MIN,MAX with 0 < MIN <= MAX, as in 500ms,5s\n", a.buffer)
		return exitError
	}
	var mu sync.Mutex
	logf := func(e watch.Event) {
		mu.Lock()
		defer mu.Unlock()
		if a.view.json {
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
	base := c.operation(run.Plan, dirArg(pos), &a.run)
	base.LockTimeout, base.Parallelism, base.Lock = a.lockTimeout, a.parallelism, true
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := watch.Run(ctx, watch.Options{Base: base, Heal: a.heal, Interval: a.interval, BufferMin: bmin, BufferMax: bmax,
		MaxRepairs: a.maxRepairs, Window: a.window, Log: logf, Metrics: watch.NewMetrics(), Listen: a.listen})
	if err != nil {
		return exitError
	}
	return exitOK
}
