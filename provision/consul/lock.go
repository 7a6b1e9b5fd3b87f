package consul

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/hashicorp/consul/api"
	"github.com/provision-dev/provision/provision"
)

// LockPrefix is the KV folder of the project locks.
const LockPrefix = "provision/locks/"

// WatchPrefix is the KV folder where the watchers of each project elect
// their healer (provision watch).
const WatchPrefix = "provision/watch/"

var _ provision.Locker = (*Backend)(nil)

// holder is the value of a lock key: who holds it, for the error of the
// one who waits.
type holder struct {
	Host      string    `json:"host"`
	PID       int       `json:"pid"`
	Operation string    `json:"operation"`
	Since     time.Time `json:"since"`
}

func (h holder) String() string {
	return fmt.Sprintf("%s by %s (pid %d) since %s", h.Operation, h.Host, h.PID, h.Since.Format(time.RFC3339))
}

// Lock takes provision/locks/<project> through a Consul session with a
// TTL, renewed from its making until the lock is released: if the holder
// dies, the session expires and the lock is released. The session is made
// first, so that its refusals are Consul's own answers: a 403 for a token
// without session:write (a refusal that no retry helps), a fresh agent's
// 500 "Missing node registration" (retried briefly). Waiting for a held
// lock is bounded by -lock-timeout plus the request deadline (the API's
// lock call has no context of its own). The returned
// context is canceled with provision.ErrLockLost when the session is
// invalidated; one failed blocking read of the lock's monitor is not taken
// for a loss.
func (b *Backend) Lock(ctx context.Context, project, operation string, wait time.Duration) (context.Context, func(), error) {
	host, _ := os.Hostname()
	value, _ := json.Marshal(holder{Host: host, PID: os.Getpid(), Operation: operation, Since: time.Now().UTC().Truncate(time.Second)})
	key := LockPrefix + project
	var session string
	err := b.net.Call(ctx, true, func(actx context.Context) error {
		id, _, err := b.client.Session().Create(&api.SessionEntry{
			Name:      "provision " + operation + " " + project,
			TTL:       sessionTTL,
			LockDelay: time.Second,
			Behavior:  api.SessionBehaviorRelease,
		}, (&api.WriteOptions{}).WithContext(actx))
		session = id
		return b.statusError(err)
	})
	if err != nil {
		return nil, nil, fmt.Errorf("taking the lock %s on %s: %w", key, b.address(), err)
	}
	// The session is renewed from now on, also while the lock is waited
	// for (-lock-timeout may be longer than its TTL); ending the renewal
	// destroys it.
	renewing := make(chan struct{})
	go b.keepSession(session, renewing)
	lock, err := b.client.LockOpts(&api.LockOptions{
		Key:              key,
		Value:            value,
		Session:          session,
		LockTryOnce:      true,
		LockWaitTime:     max(wait, time.Millisecond), // zero would mean Consul's default, 15 s
		MonitorRetries:   5,
		MonitorRetryTime: time.Second,
	})
	var lost <-chan struct{}
	if err == nil {
		lost, err = b.acquire(ctx, lock, wait)
	}
	if err != nil || lost == nil {
		close(renewing)
		if err != nil {
			return nil, nil, fmt.Errorf("taking the lock %s on %s: %w", key, b.address(), b.statusError(err))
		}
		return nil, nil, b.heldError(key, wait)
	}
	lockCtx, cancel := context.WithCancelCause(ctx)
	go func() {
		select {
		case <-lost:
			cancel(provision.ErrLockLost)
		case <-lockCtx.Done():
		}
	}()
	// Releasing is bounded too: when the agent does not answer, the
	// session's TTL releases the lock within 10 s anyway.
	unlock := func() {
		cancel(nil)
		var stopRenewing sync.Once
		done := make(chan struct{})
		go func() {
			_ = lock.Unlock()
			_ = lock.Destroy() // removes the key unless another waiter uses it
			// Ending the renewal destroys the session; only now, since a
			// session destroyed while it holds the lock would leave the
			// key in its lock-delay.
			stopRenewing.Do(func() { close(renewing) })
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(b.net.Request):
			// The agent does not answer the release: the renewals end
			// anyway, so that the session's TTL releases the lock (a
			// watcher lives on after the run, and would hold it forever).
			stopRenewing.Do(func() { close(renewing) })
		}
	}
	return lockCtx, unlock, nil
}

// sessionTTL is the TTL of the lock's session: the lock of a run that
// dies is released that long after.
const sessionTTL = "10s"

// keepSession renews the session every half TTL until done is closed,
// then destroys it. A renewal that fails is tried again every second for
// as long as it takes: during a leader election Consul cannot renew (500,
// or no answer), but the session lives on (a new leader starts every TTL
// afresh), so the renewals go on until Consul answers that the session is
// gone; whether the lock still holds is the lock monitor's to say. (The
// API's RenewPeriodic stops renewing a TTL after its last success, which
// an election of that length would turn into a lost lock.)
func (b *Backend) keepSession(id string, done <-chan struct{}) {
	ttl, _ := time.ParseDuration(sessionTTL)
	for wait := ttl / 2; ; {
		select {
		case <-done:
			ctx, cancel := context.WithTimeout(context.Background(), b.net.Request)
			_, _ = b.client.Session().Destroy(id, (&api.WriteOptions{}).WithContext(ctx))
			cancel()
			return
		case <-time.After(wait):
		}
		ctx, cancel := context.WithTimeout(context.Background(), b.net.Request)
		entry, _, err := b.client.Session().Renew(id, (&api.WriteOptions{}).WithContext(ctx))
		cancel()
		switch {
		case err != nil:
			wait = time.Second
		case entry == nil:
			<-done // gone (404): nothing is left to renew or destroy
			return
		default:
			wait = ttl / 2
		}
	}
}

// acquire tries the lock once, waiting up to wait for a holder to let go;
// the channel of a lost lock is nil when another run holds it.
func (b *Backend) acquire(ctx context.Context, lock *api.Lock, wait time.Duration) (<-chan struct{}, error) {
	// The wait for a held lock is the caller's, not a stall. Consul adds
	// up to wait/16 of jitter to a blocking query.
	lctx, cancel := context.WithTimeout(ctx, wait+wait/16+b.net.Request)
	defer cancel()
	type result struct {
		lost <-chan struct{}
		err  error
	}
	done := make(chan result, 1)
	go func() {
		l, err := lock.Lock(lctx.Done())
		done <- result{l, err}
	}()
	select {
	case r := <-done:
		return r.lost, r.err
	case <-lctx.Done():
		return nil, lctx.Err()
	}
}

// heldError names the holder of a lock that could not be taken.
func (b *Backend) heldError(key string, wait time.Duration) error {
	pair, _, err := b.client.KV().Get(key, nil)
	who := "someone else"
	var h holder
	if err == nil && pair != nil && json.Unmarshal(pair.Value, &h) == nil && h.Host != "" {
		who = h.String()
	}
	return errors.New("the lock " + key + " is held: " + who + "; waited " + wait.String() + " (-lock-timeout)")
}
