package watch

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/hashicorp/consul/api"
	"github.com/provision-dev/provision/provision/consul"
)

// LeaderTTL is the TTL of the leader's session: when a leader dies
// without releasing it, Consul invalidates the session within the TTL
// (at most twice it), and another watcher takes over a second later
// (the lock delay).
const LeaderTTL = 10 * time.Second

// Leadership is one watcher's part in the election of its project's
// healer.
type Leadership struct {
	held atomic.Bool
}

// Held reports whether this watcher leads now.
func (l *Leadership) Held() bool { return l.held.Load() }

// Run takes part until ctx ends: it waits for the lock, holds it while
// its session lives, and releases it at the end. changed is told of each
// change; log of trouble.
func (l *Leadership) Run(ctx context.Context, c *api.Client, project string, changed func(bool), log func(string, ...any)) {
	lock, err := c.LockOpts(&api.LockOptions{Key: consul.WatchPrefix + project, SessionName: "provision watch " + project,
		SessionTTL: LeaderTTL.String(), LockDelay: time.Second, MonitorRetries: 3})
	if err != nil {
		log("the leader lock cannot be set up: %s", err)
		return
	}
	// A failure is logged once until another one, or a success, comes
	// (a token without write on the key fails the same way every time);
	// the tries slow down to one in 30 s.
	failed, pause := "", 2*time.Second
	for ctx.Err() == nil {
		lost, err := lock.Lock(ctx.Done())
		if err != nil {
			if text := localAddr.ReplaceAllString(err.Error(), ""); text != failed {
				failed = text
				log("taking the leader lock %s%s failed (%s); this watcher reports and does not heal until it leads. "+
					"provision policy -watch lists what the token needs", consul.WatchPrefix, project, err)
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
		l.held.Store(true)
		changed(true)
		select {
		case <-ctx.Done():
			l.held.Store(false)
			_ = lock.Unlock()
			changed(false)
			return
		case <-lost:
			l.held.Store(false)
			changed(false)
			_ = lock.Unlock()
		}
	}
}
