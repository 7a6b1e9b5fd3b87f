package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/provision-dev/provision/provision/adapter"
	"github.com/provision-dev/provision/provision/run"
)

// applyFlags are the options apply and destroy share.
type applyFlags struct {
	autoApprove *bool
	parallelism *int
	noColor     *bool
	json        *bool
	lock        *bool
	lockTimeout *time.Duration
	plan        planFlags
}

func registerApplyFlags(fs *flag.FlagSet) *applyFlags {
	f := &applyFlags{
		autoApprove: fs.Bool("auto-approve", false, "do not ask for confirmation"),
		parallelism: fs.Int("parallelism", 10, "send the requests of at most `N` objects at a time"),
		noColor:     noColorFlag(fs),
		json:        fs.Bool("json", false, "print one JSON object per event (needs -auto-approve or a saved plan)"),
		lock:        fs.Bool("lock", true, "hold the project's lock in Consul while applying"),
		lockTimeout: fs.Duration("lock-timeout", 0, "wait this long for the lock held by another run"),
	}
	f.plan.register(fs)
	fs.DurationVar(&f.plan.verifyTimeout, "verify-timeout", run.DefaultVerifyTimeout, "wait this long for each declared traefik proxy to serve every gated path through its forward-auth middleware, then probe it")
	return f
}

// netFlags bound the network calls of a command.
type netFlags struct {
	timeout, request *time.Duration
}

func (f *netFlags) register(fs *flag.FlagSet, overall time.Duration) {
	f.timeout = fs.Duration("timeout", overall, "give up the whole command after this long")
	f.request = fs.Duration("request-timeout", adapter.DefaultDeadlines.Request, "give up one request to a server after this long (reads of refused, reset or 5xx-answering servers are retried; a Consul or Elasticsearch election is waited out within it)")
}

func (f *netFlags) deadlines() adapter.Deadlines {
	d := adapter.DefaultDeadlines
	d.Request = *f.request
	return d
}

// interruptible is the context of a command that writes: the first
// SIGINT or SIGTERM cancels it (no new request starts; the ones under way
// finish), a second one ends the process at once, and -timeout bounds it.
func interruptible(f *netFlags) (context.Context, func()) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop() // the default action again: a second Ctrl-C exits at once
	}()
	tctx, cancel := f.bound(ctx)
	return tctx, func() { cancel(); stop() }
}

// bound is ctx ended by -timeout, with the cause saying so.
func (f *netFlags) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeoutCause(ctx, *f.timeout, fmt.Errorf("the command ran past -timeout=%s", *f.timeout))
}

func (c *cli) apply(args []string) int {
	fs := c.flagSet("apply")
	f := registerApplyFlags(fs)
	snapshot := fs.String("snapshot", "", "refused: a plan made from a snapshot is never applied (use plan -snapshot `FILE`)")
	pos, code, ok := c.parse(fs, args, 1, &jsonApply{&jsonView{o: c.output}})
	if !ok {
		return code
	}
	if *snapshot != "" {
		c.textView(*f.noColor).Diagnostics(run.Refusal("A snapshot is never applied",
			fmt.Sprintf("apply -snapshot %s: a snapshot records the live state as it was when it was taken; applying what it plans could undo whatever changed since. Nothing was sent. Plan and apply against the live systems, or use provision plan -snapshot to review.", *snapshot), nil))
		return exitError
	}
	op := c.applyOperation(run.Apply, dirArg(pos), f)
	if len(pos) == 1 && !strings.HasSuffix(pos[0], ".hcl") {
		if st, err := os.Stat(pos[0]); err == nil && st.Mode().IsRegular() {
			op.Type, op.Dir, op.PlanFile = run.ApplySaved, "", pos[0]
		}
	}
	return c.send(op, f, "Do you want to perform these actions?")
}

func (c *cli) destroy(args []string) int {
	fs := c.flagSet("destroy")
	f := registerApplyFlags(fs)
	indices := fs.Bool("indices", false, "also delete the project's indices (never by default: they hold data)")
	pos, code, ok := c.parse(fs, args, 1, &jsonApply{&jsonView{o: c.output}})
	if !ok {
		return code
	}
	op := c.applyOperation(run.Destroy, dirArg(pos), f)
	op.SearchIndices = *indices
	return c.send(op, f, "Do you really want to destroy these objects?")
}

// applyOperation is the run of apply or destroy the flags describe.
func (c *cli) applyOperation(t run.Type, dir string, f *applyFlags) run.Operation {
	o := c.operation(t, dir, &f.plan)
	o.Lock, o.LockTimeout, o.Parallelism, o.AutoApprove = *f.lock, *f.lockTimeout, *f.parallelism, *f.autoApprove
	return o
}

// send runs an operation that sends, interruptible, with the view the
// flags choose; question is what a person is asked before anything is
// sent.
func (c *cli) send(op run.Operation, f *applyFlags, question string) int {
	ctx, stop := interruptible(&f.plan.net)
	defer stop()
	var v run.ApplyView = &jsonApply{&jsonView{o: c.output}}
	if !*f.json {
		v = &humanApply{textView: c.textView(*f.noColor), live: c.isTerminal(c.stderr), command: op.Type.String(), question: question}
	}
	if op.Start(ctx, v).Failed() {
		return exitError
	}
	return exitOK
}
