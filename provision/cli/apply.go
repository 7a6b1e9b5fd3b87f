package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/provision-dev/provision/provision/connect"
	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/provision/run"
)

func (c *cli) apply(args []string) int {
	var a applyArgs
	pos, code, ok := c.args("apply", &a, args, 1, &jsonApply{&jsonView{o: c.output}})
	if !ok {
		return code
	}
	if a.snapshot != "" {
		c.textView(a.view.noColor).Diagnostics(run.Refusal("A snapshot is never applied",
			fmt.Sprintf("apply -snapshot %s: a snapshot records the live state as it was when it was taken; applying what it plans could undo whatever changed since. Nothing was sent. Plan and apply against the live systems, or use provision plan -snapshot to review.", a.snapshot), nil))
		return exitError
	}
	op := c.applyOperation(run.Apply, dirArg(pos), &a.sendArgs)
	if a.record != "" {
		var err error
		if op.Applied, err = readRecord(a.record); err != nil {
			c.textView(a.view.noColor).Diagnostics(run.Refusal("Cannot read -record", err.Error()+". Nothing was sent.", nil))
			return exitError
		}
	}
	if len(pos) == 1 && !strings.HasSuffix(pos[0], ".hcl") {
		if st, err := os.Stat(pos[0]); err == nil && st.Mode().IsRegular() {
			op.Type, op.Dir, op.PlanFile = run.ApplySaved, "", pos[0]
		}
	}
	return c.send(op, &a.sendArgs, "Do you want to perform these actions?")
}

func (c *cli) destroy(args []string) int {
	var a destroyArgs
	pos, code, ok := c.args("destroy", &a, args, 1, &jsonApply{&jsonView{o: c.output}})
	if !ok {
		return code
	}
	op := c.applyOperation(run.Destroy, dirArg(pos), &a.sendArgs)
	op.Remove = plans.Removal{connect.RemoveIndices: a.indices}
	return c.send(op, &a.sendArgs, "Do you really want to destroy these objects?")
}

// applyOperation is the run of apply or destroy the flags describe.
func (c *cli) applyOperation(t run.Type, dir string, a *sendArgs) run.Operation {
	o := c.operation(t, dir, &a.run)
	o.Lock, o.LockTimeout, o.Parallelism, o.AutoApprove, o.NoInput = a.lock, a.lockTimeout, a.parallelism, a.autoApprove, !a.input
	return o
}

// interruptible is the context of a command that writes: the first
// SIGINT or SIGTERM cancels it (no new request starts; the ones under way
// finish), a second one ends the process at once, and -timeout bounds it.
func interruptible(a *netArgs) (context.Context, func()) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop() // the default action again: a second Ctrl-C exits at once
	}()
	tctx, cancel := a.bound(ctx)
	return tctx, func() { cancel(); stop() }
}

// send runs an operation that sends, interruptible, with the view the
// flags choose; question is what a person is asked before anything is
// sent.
func (c *cli) send(op run.Operation, a *sendArgs, question string) int {
	ctx, stop := interruptible(&a.run.net)
	defer stop()
	var v run.View = &jsonApply{&jsonView{o: c.output}}
	if !a.view.json {
		v = &humanApply{textView: c.textView(a.view.noColor), live: c.isTerminal(c.stderr), command: op.Type.String(), question: question}
	}
	if op.Start(ctx, v).Failed() {
		return exitError
	}
	return exitOK
}
