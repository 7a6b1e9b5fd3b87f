package cli

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/provision-dev/provision/provision"
	"github.com/provision-dev/provision/provision/run"
)

// snapshot reads every backend the specs declare, exactly as plan does,
// and records what it read in one file: plan -snapshot and provision
// test plan from it with no network.
func (c *cli) snapshot(args []string) int {
	var a snapshotArgs
	pos, code, ok := c.args("snapshot", &a, args, 1, nil)
	if !ok {
		return code
	}
	v := c.textView(a.view.noColor)
	if a.out == "" {
		v.Diagnostics(run.Refusal("No snapshot file", "snapshot needs the file to write: provision snapshot -out FILE [DIR].", nil))
		return exitError
	}
	at, err := c.takenAt()
	if err != nil {
		v.Diagnostics(run.Refusal("Invalid SOURCE_DATE_EPOCH", err.Error()+".", nil))
		return exitError
	}
	ctx, cancel := a.run.net.bound(context.Background())
	defer cancel()
	r := c.operation(run.Snapshot, dirArg(pos), &a.run).Start(ctx, v)
	if r.Failed() {
		return exitError
	}
	v.Diagnostics(r.Warnings)
	s, err := provision.TakeSnapshot(r.Config.Project, r.Opened.Backends, r.Live, provision.Servers(ctx, r.Opened.Backends), at, r.Config.Secrets)
	if err == nil {
		err = provision.WriteSnapshot(a.out, s)
	}
	if err != nil {
		v.Diagnostics(run.Refusal("Cannot write the snapshot", err.Error()+".", nil))
		return exitError
	}
	for _, b := range s.Backends {
		v.note("%s: %s at %s", b.Name, b.Server, b.Address)
	}
	v.note("Wrote the live state of project %s, as of %s, to %s. Plan from it with no network: provision plan -snapshot %s %s", s.Project, s.TakenAt, a.out, a.out, dirArg(pos))
	return exitOK
}

// takenAt is now, or SOURCE_DATE_EPOCH (seconds since 1970, UTC) when
// set: the same live state then gives a byte-identical snapshot.
func (c *cli) takenAt() (time.Time, error) {
	epoch := c.getenv("SOURCE_DATE_EPOCH")
	if epoch == "" {
		return time.Now(), nil
	}
	n, err := strconv.ParseInt(epoch, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH is %q, not a number of seconds", epoch)
	}
	return time.Unix(n, 0), nil
}
