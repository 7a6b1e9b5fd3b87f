package consul

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/consul/api"
	"github.com/provision-dev/provision/provision"
	"github.com/provision-dev/provision/provision/adapter"
)

// Follow tells feed each time the services of the agent's node change,
// through a blocking query of the catalog (GET
// /v1/catalog/node-services/<node>?index=...&wait=...; the agent's own
// /v1/agent/services has no content hash on Consul 1.15, so it cannot
// block): a change is seen as it happens, and an idle agent costs one
// open request. An agent that goes away (restarted, its registrations
// lost) is asked again with backoff, and its return is a change.
//
// The catalog is the servers': during a leader election (or with no
// quorum) it cannot answer, while the agent itself still does. Then the
// agent's own services are read once a second until the catalog answers
// again, so that drift on the agent is seen meanwhile; the catalog's
// return is a change too (a repair needs a leader for the lock).
func (b *Backend) Follow(ctx context.Context, feed provision.Feed) {
	what := "the Consul agent " + b.address()
	node := ""
	agent := &fallback{what: "watching the agent's own services (GET /v1/agent/services) until the catalog answers", poll: func(ctx context.Context) (string, error) {
		ctx, cancel := context.WithTimeout(ctx, b.net.Request)
		defer cancel()
		services, err := b.client.Agent().ServicesWithFilterOpts("", (&api.QueryOptions{}).WithContext(ctx))
		if err != nil {
			return "", err
		}
		raw, _ := json.Marshal(services)
		sum := sha256.Sum256(raw)
		return hex.EncodeToString(sum[:]), nil
	}}
	follow(ctx, feed, what, what+" services changed", agent, func(ctx context.Context, index uint64) (uint64, error) {
		var err error
		if node == "" {
			if node, err = b.client.Agent().NodeName(); err != nil {
				return 0, err
			}
		}
		_, meta, err := b.client.Catalog().NodeServiceList(node, (&api.QueryOptions{WaitIndex: index, WaitTime: 5 * time.Minute}).WithContext(ctx))
		if err != nil {
			node = ""
			return 0, b.statusError(err)
		}
		return meta.LastIndex, nil
	})
}

// Follow tells feed each time a key under the folders of the declared
// keys changes: one blocking query per folder (GET
// /v1/kv/<folder>?recurse=true&index=...&wait=...).
func (kv *KV) Follow(ctx context.Context, feed provision.Feed) {
	done := make(chan struct{})
	for _, prefix := range kv.prefixes {
		go func() {
			defer func() { done <- struct{}{} }()
			what := fmt.Sprintf("the keys under %q on %s", prefix, kv.agent.address())
			follow(ctx, feed, what, what+" changed", nil, func(ctx context.Context, index uint64) (uint64, error) {
				_, meta, err := kv.agent.client.KV().List(prefix, (&api.QueryOptions{WaitIndex: index, WaitTime: 5 * time.Minute}).WithContext(ctx))
				if err != nil {
					return 0, err
				}
				return meta.LastIndex, nil
			})
		}()
	}
	for range kv.prefixes {
		<-done
	}
}

// fallback watches what a blocking query does, another way, while the
// query fails and this way does not: poll returns a digest of what is
// watched, asked once a second.
type fallback struct {
	what string // for the log: "watching ... until it does"
	poll func(ctx context.Context) (string, error)
	// seen is the last digest, while the fallback is in use ("" when not).
	seen string
}

// fallbackWait bounds a blocking query while the fallback is in use: the
// query is asked without an index then, and during an election Consul
// holds it until a leader is elected, while the fallback polls.
const fallbackWait = 2 * time.Second

// follow runs one blocking query after another until ctx ends: wait
// asks with the last index and returns the next. A change of the index
// is a change (changed); a failure is said once, asked again with
// backoff, and an answer after it is a return (feed.Back). With a
// fallback that answers when the query does not, the fallback is used
// meanwhile (said once), and the query's answer after it is a change.
func follow(ctx context.Context, feed provision.Feed, what, changed string, fb *fallback, wait func(ctx context.Context, index uint64) (uint64, error)) {
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
func (fb *fallback) use(ctx context.Context, feed provision.Feed, what, changed string, err error) bool {
	var se *adapter.StatusError
	if errors.As(err, &se) && se.Code < 500 {
		return false // a refusal (a 403): the agent would be polled forever for nothing
	}
	digest, perr := fb.poll(ctx)
	if perr != nil {
		return false
	}
	switch {
	case fb.seen == "":
		why := "does not answer"
		if adapter.Leaderless(err) {
			why = "has no leader"
		}
		feed.Log("warn", "%s: the catalog %s (%s); %s", what, why, adapter.WithoutLocalAddrs(err.Error()), fb.what)
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

// LeaderTTL is the TTL of the leader's session: when a leader dies
// without releasing it, Consul invalidates the session within the TTL
// (at most twice it), and another watcher takes over a second later
// (the lock delay).
const LeaderTTL = 10 * time.Second

// Elect takes part in the election of the project's healer until ctx
// ends: it waits for the key provision/watch/<project>, holds it while
// its session lives, and releases it at the end. changed is told of each
// change of leadership; log of trouble, once until it changes (a token
// without write on the key fails the same way every time), the tries
// slowing down to one in 30 s.
func (b *Backend) Elect(ctx context.Context, project string, changed func(bool), log func(string, ...any)) {
	lock, err := b.client.LockOpts(&api.LockOptions{Key: WatchPrefix + project, SessionName: "provision watch " + project,
		SessionTTL: LeaderTTL.String(), LockDelay: time.Second, MonitorRetries: 3})
	if err != nil {
		log("the leader lock cannot be set up: %s", err)
		return
	}
	failed, pause := "", 2*time.Second
	for ctx.Err() == nil {
		lost, err := lock.Lock(ctx.Done())
		if err != nil {
			if text := adapter.WithoutLocalAddrs(err.Error()); text != failed {
				failed = text
				log("taking the leader lock %s%s failed (%s); this watcher reports and does not heal until it leads. "+
					"provision policy -watch lists what the token needs", WatchPrefix, project, err)
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(pause):
			}
			pause = min(2*pause, 30*time.Second)
			continue
		}
		failed, pause = "", 2*time.Second
		if lost == nil {
			return // ctx ended while waiting
		}
		changed(true)
		select {
		case <-ctx.Done():
			_ = lock.Unlock()
			changed(false)
			return
		case <-lost:
			changed(false)
			_ = lock.Unlock()
		}
	}
}
