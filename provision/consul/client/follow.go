package client

import (
	"context"
	"errors"
	"time"

	"github.com/provision-dev/provision/provision"
	"github.com/provision-dev/provision/provision/adapter"
)

// Fallback watches what a blocking query does, another way, while the
// query fails and this way does not: Poll returns a digest of what is
// watched, asked once a second.
type Fallback struct {
	What string // for the log: "watching ... until it does"
	Poll func(ctx context.Context) (string, error)
	// seen is the last digest, while the fallback is in use ("" when not).
	seen string
}

// fallbackWait bounds a blocking query while the fallback is in use: the
// query is asked without an index then, and during an election Consul
// holds it until a leader is elected, while the fallback polls.
const fallbackWait = 2 * time.Second

// Follow runs one blocking query after another until ctx ends: wait
// asks with the last index and returns the next. A change of the index
// is a change (changed); a failure is said once, asked again with
// backoff, and an answer after it is a return (feed.Back). With a
// fallback that answers when the query does not, the fallback is used
// meanwhile (said once), and the query's answer after it is a change.
func Follow(ctx context.Context, feed provision.Feed, what, changed string, fb *Fallback, wait func(ctx context.Context, index uint64) (uint64, error)) {
	var index uint64
	backoff, down := 250*time.Millisecond, false
	for ctx.Err() == nil {
		qctx, cancel := ctx, context.CancelFunc(func() {})
		if fb != nil && fb.seen != "" {
			qctx, cancel = context.WithTimeout(ctx, fallbackWait)
		}
		last, err := wait(qctx, index)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			if fb != nil && fb.use(ctx, feed, what, changed, err) {
				index = 0
				continue
			}
			if !down {
				feed.Log("warn", "%s does not answer (%s); asking again with backoff", what, err)
				down = true
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, 5*time.Second)
			index = 0
			continue
		}
		backoff = 250 * time.Millisecond
		if fb != nil && fb.seen != "" {
			fb.seen = ""
			feed.Log("info", "%s: the catalog answers again", what)
			feed.Changed(what + " is back")
		}
		if down {
			down = false
			feed.Log("info", "%s answers again", what)
			feed.Back()
			feed.Changed(what + " is back")
		}
		switch {
		case last < index:
			index = 0 // the index went back (a restarted server): start over
			feed.Changed(changed)
		case last > index:
			if index != 0 {
				feed.Changed(changed)
			}
			index = last
		}
	}
}

// use polls the fallback after the query failed with err, and says
// whether it answers: the first time, it says why it is used; later, a
// new digest is a change. It waits a second before it returns true.
func (fb *Fallback) use(ctx context.Context, feed provision.Feed, what, changed string, err error) bool {
	var se *adapter.StatusError
	if errors.As(err, &se) && se.Code < 500 {
		return false // a refusal (a 403): the agent would be polled forever for nothing
	}
	digest, perr := fb.Poll(ctx)
	if perr != nil {
		return false
	}
	switch {
	case fb.seen == "":
		why := "does not answer"
		if adapter.Leaderless(err) {
			why = "has no leader"
		}
		feed.Log("warn", "%s: the catalog %s (%s); %s", what, why, adapter.WithoutLocalAddrs(err.Error()), fb.What)
	case digest != fb.seen:
		feed.Changed(changed + " (seen on the agent)")
	}
	fb.seen = digest
	select {
	case <-ctx.Done():
	case <-time.After(time.Second):
	}
	return true
}
