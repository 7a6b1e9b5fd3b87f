// Package cluster is the coordination of a project's runs through the
// Consul cluster, on the agent that holds it (the consul block's,
// CONSUL_HTTP_ADDR, else the first agent block's): the apply lock, the
// record of the agents the project's services are on, the history of its
// applies, and the election of provision watch's healer. It is no
// backend: it plans nothing.
package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/consul/api"
	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision"
	"github.com/provision-dev/provision/provision/adapter"
	"github.com/provision-dev/provision/provision/consul/acl"
	"github.com/provision-dev/provision/provision/consul/client"
	"github.com/provision-dev/provision/provision/plans"
)

// Cluster is the agent that holds the project's lock and record.
type Cluster struct{ a *client.Agent }

// New is the cluster reached through agent a.
func New(a *client.Agent) *Cluster { return &Cluster{a: a} }

// Address is the base URL of the agent the cluster is reached through.
func (c *Cluster) Address() string { return c.a.Address() }

// NodeName is the name of the agent's node, where the lock's session is
// written.
func (c *Cluster) NodeName(ctx context.Context) (string, error) { return c.a.NodeName(ctx) }

// Permissions are what the cluster's coordination needs of a project's
// token (at: the project attribute): write on its three keys (the lock,
// the record and the history), and NodePermissions on the node of the
// agent that holds the lock (when node is not empty).
func Permissions(project string, at *hcl.Range, node string, agent bool) []acl.Permission {
	out := []acl.Permission{
		{Resource: "key", Segment: LockPrefix + project, Access: "write", Why: "the apply lock", At: at},
		{Resource: "key", Segment: RecordPrefix + project, Access: "write", Why: "the record of the project's agents", At: at},
		{Resource: "key", Segment: HistoryPrefix + project, Access: "write", Why: "the history of the project's applies", At: at},
	}
	if node != "" {
		out = append(out, NodePermissions(node, at, agent)...)
	}
	return out
}

// NodePermissions are what the lock needs on the node of the agent that
// holds it (in each datacenter of the project): write on sessions and,
// with agent, read of the agent (whose node name provision policy looks
// up).
func NodePermissions(node string, at *hcl.Range, agent bool) []acl.Permission {
	out := []acl.Permission{{Resource: "session", Segment: node, Access: "write", Why: "the lock's session, on the node of the agent that holds it", At: at}}
	if agent {
		out = append(out, acl.Permission{Resource: "agent", Segment: node, Access: "read", Why: "provision policy looks up that node's name", At: at})
	}
	return out
}

// WatchPermission is what provision watch needs beyond an apply's
// permissions: the key of its leader election (its session is on the
// lock's node, like the lock's).
func WatchPermission(project string, at *hcl.Range) acl.Permission {
	return acl.Permission{Resource: "key", Segment: WatchPrefix + project, Access: "write", Why: "provision watch: the election of the project's healer", At: at}
}

// LockPrefix is the KV folder of the project locks.
const LockPrefix = "provision/locks/"

// WatchPrefix is the KV folder where the watchers of each project elect
// their healer (provision watch).
const WatchPrefix = "provision/watch/"

var _ provision.Locker = (*Cluster)(nil)

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
func (c *Cluster) Lock(ctx context.Context, project, operation string, wait time.Duration) (context.Context, func(), error) {
	host, _ := os.Hostname()
	value, _ := json.Marshal(holder{Host: host, PID: os.Getpid(), Operation: operation, Since: time.Now().UTC().Truncate(time.Second)})
	key := LockPrefix + project
	// An agent of another datacenter than the declared one would take the
	// lock there (or fail to reach it): refused before anything is sent.
	// An agent that cannot say is left to the session's own answer.
	var elsewhere *client.Elsewhere
	if err := c.a.InDatacenter(ctx, c.a.Conf.Datacenter); errors.As(err, &elsewhere) {
		return nil, nil, fmt.Errorf("taking the lock %s: %w", key, err)
	}
	var session string
	err := c.a.Net.Call(ctx, true, func(actx context.Context) error {
		id, _, err := c.a.API.Session().Create(&api.SessionEntry{
			Name:      "provision " + operation + " " + project,
			TTL:       sessionTTL,
			LockDelay: time.Second,
			Behavior:  api.SessionBehaviorRelease,
		}, (&api.WriteOptions{}).WithContext(actx))
		session = id
		return c.a.StatusError(err)
	})
	if err != nil {
		return nil, nil, fmt.Errorf("taking the lock %s on %s: %w", key, c.a.Address(), err)
	}
	// The session is renewed from now on, also while the lock is waited
	// for (-lock-timeout may be longer than its TTL); ending the renewal
	// destroys it.
	renewing := make(chan struct{})
	go c.keepSession(session, renewing)
	lock, err := c.a.API.LockOpts(&api.LockOptions{
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
		err = c.a.Net.Paced(ctx, func() (err error) {
			lost, err = c.acquire(ctx, lock, wait)
			return c.a.SlowDownText(err)
		})
	}
	if err != nil || lost == nil {
		close(renewing)
		if err != nil {
			return nil, nil, fmt.Errorf("taking the lock %s on %s: %w", key, c.a.Address(), c.a.StatusError(err))
		}
		return nil, nil, c.heldError(key, wait)
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
		case <-time.After(c.a.Net.Request):
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
func (c *Cluster) keepSession(id string, done <-chan struct{}) {
	ttl, _ := time.ParseDuration(sessionTTL)
	for wait := ttl / 2; ; {
		select {
		case <-done:
			ctx, cancel := context.WithTimeout(context.Background(), c.a.Net.Request)
			_, _ = c.a.API.Session().Destroy(id, (&api.WriteOptions{}).WithContext(ctx))
			cancel()
			return
		case <-time.After(wait):
		}
		ctx, cancel := context.WithTimeout(context.Background(), c.a.Net.Request)
		entry, _, err := c.a.API.Session().Renew(id, (&api.WriteOptions{}).WithContext(ctx))
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
func (c *Cluster) acquire(ctx context.Context, lock *api.Lock, wait time.Duration) (<-chan struct{}, error) {
	// The wait for a held lock is the caller's, not a stall. Consul adds
	// up to wait/16 of jitter to a blocking query.
	lctx, cancel := context.WithTimeout(ctx, wait+wait/16+c.a.Net.Request)
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
func (c *Cluster) heldError(key string, wait time.Duration) error {
	pair, _, err := c.a.API.KV().Get(key, nil)
	who := "someone else"
	var h holder
	if err == nil && pair != nil && json.Unmarshal(pair.Value, &h) == nil && h.Host != "" {
		who = h.String()
	}
	return errors.New("the lock " + key + " is held: " + who + "; waited " + wait.String() + " (-lock-timeout)")
}

// RecordPrefix is the KV folder of the record of each project's agents:
// where its services were registered at its last complete apply. An agent
// block that goes away, or an address that changes, would otherwise
// silently leave the services there unread and never pruned.
const RecordPrefix = "provision/agents/"

// agentsOf is each Consul backend of a plan by name ("consul" or
// "agent.<name>") and address; with holding, only those the specs declare
// services on (the record: where the project's services are after an
// apply, whatever -target left out of it).
func agentsOf(backends []plans.BackendInfo, holding bool) map[string]string {
	m := map[string]string{}
	for _, b := range backends {
		var sc struct {
			IDs []string `json:"ids"`
		}
		if b.Kind != client.AgentKind && b.Kind != client.CatalogKind || holding && (json.Unmarshal(b.Scope, &sc) != nil || len(sc.IDs) == 0) {
			continue
		}
		m[b.Name] = b.Address
	}
	return m
}

// recorded reads the project's record; nil when there is none.
func (c *Cluster) recorded(ctx context.Context, project string) (map[string]string, error) {
	var rec map[string]string
	_, err := c.readKey(ctx, RecordPrefix+project, func(b []byte) error { return json.Unmarshal(b, &rec) })
	return rec, err
}

// readKey reads key in one request and hands its value to decode; it
// returns the key's index, 0 (and decode not called) when there is none.
func (c *Cluster) readKey(ctx context.Context, key string, decode func([]byte) error) (uint64, error) {
	var index uint64
	err := c.a.Net.Call(ctx, true, func(ctx context.Context) error {
		pair, _, err := c.a.API.KV().Get(key, (&api.QueryOptions{}).WithContext(ctx))
		if err != nil || pair == nil {
			return c.a.StatusError(err)
		}
		index = pair.ModifyIndex
		return decode(pair.Value)
	})
	return index, err
}

// Recorded reads the project's record, in one request: what a plan's
// Forgotten needs.
func (c *Cluster) Recorded(ctx context.Context, project string) *plans.Record {
	rec, err := c.recorded(ctx, project)
	if err != nil {
		_, refused := adapter.Refused(err)
		return &plans.Record{Error: err.Error(), Refused: refused}
	}
	return &plans.Record{Agents: rec}
}

// Forgotten warns about each agent of the record that the plan does not
// read (its block is gone, or its address changed): the services of the
// project there are neither planned nor pruned. An agent left out of the
// plan (leftOut, -exclude agent.<name>) is not forgotten.
func (c *Cluster) Forgotten(r *plans.Record, project string, backends []plans.BackendInfo, leftOut []string) hcl.Diagnostics {
	if r == nil {
		return nil
	}
	if r.Error != "" {
		summary := "Cannot read the record of the project's agents"
		if r.Refused {
			summary = "No permission to read the record of the project's agents"
		}
		return hcl.Diagnostics{{Severity: hcl.DiagWarning, Summary: summary,
			Detail: fmt.Sprintf("Reading %s%s from %s: %s. A removed agent block is not noticed.", RecordPrefix, project, c.a.Address(), r.Error), Subject: c.a.Where.Ptr()}}
	}
	rec := r.Agents
	now := agentsOf(backends, false)
	var diags hcl.Diagnostics
	for _, name := range slices.Sorted(maps.Keys(rec)) {
		if now[name] == rec[name] || slices.Contains(leftOut, name) {
			continue
		}
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagWarning,
			Summary:  "Services on an agent this plan does not read",
			Detail: fmt.Sprintf("At the last apply, project %s had its services on %s at %s, which the specs no longer declare at that address. "+
				"An agent's services can only be read and deregistered through that agent, so whatever the project registered there is neither planned nor pruned, and the next apply forgets it. "+
				"To prune them, declare the agent again (an agent block with that address, no service naming it) and apply; if the node is gone, its services went with it.",
				project, name, rec[name]),
			Subject: c.a.Where.Ptr(),
		})
	}
	return diags
}

// Remember records the agents the project's services are on after a
// complete apply of the plan (none after a destroy), writing only when the
// record changed: a converged apply writes nothing. A backend of kept (an
// agent left out of the plan, or one a partial apply read) that the specs
// hold nothing on keeps its record as it was.
func (c *Cluster) Remember(ctx context.Context, project string, backends []plans.BackendInfo, kept []string) error {
	now := agentsOf(backends, true)
	rec, err := c.recorded(ctx, project)
	if err != nil {
		return err
	}
	for _, name := range kept {
		if _, held := now[name]; !held && rec[name] != "" {
			now[name] = rec[name]
		}
	}
	if maps.Equal(rec, now) {
		return nil
	}
	key := RecordPrefix + project
	return c.a.Net.Call(adapter.Sending(ctx), true, func(ctx context.Context) error {
		q := (&api.WriteOptions{}).WithContext(ctx)
		if len(now) == 0 {
			_, err := c.a.API.KV().Delete(key, q)
			return c.a.StatusError(err)
		}
		value, _ := json.Marshal(now)
		_, err := c.a.API.KV().Put(&api.KVPair{Key: key, Value: value}, q)
		return c.a.StatusError(err)
	})
}

// HistoryPrefix is the KV folder of each project's history of applies:
// a JSON array of plans.Applied, oldest first.
const HistoryPrefix = "provision/history/"

// History reads the project's history of applies, oldest first; empty
// when it has none.
func (c *Cluster) History(ctx context.Context, project string) ([]plans.Applied, error) {
	h, _, err := c.history(ctx, project)
	return h, err
}

// history is the project's history and the index of its key (0 when
// there is none), for a write that checks nobody wrote it in between.
func (c *Cluster) history(ctx context.Context, project string) ([]plans.Applied, uint64, error) {
	var h []plans.Applied
	index, err := c.readKey(ctx, HistoryPrefix+project, func(b []byte) error {
		if err := json.Unmarshal(b, &h); err != nil {
			return fmt.Errorf("%s%s is not a history of applies: %w", HistoryPrefix, project, err)
		}
		return nil
	})
	return h, index, err
}

// Append adds entries to the project's history after an apply completed,
// keeping the newest plans.HistoryLength. It runs under the project's
// lock, and writes with Consul's check-and-set all the same: an entry is
// never lost to a write in between.
func (c *Cluster) Append(ctx context.Context, project string, entries []plans.Applied) error {
	if len(entries) == 0 {
		return nil
	}
	h, index, err := c.history(ctx, project)
	if err != nil {
		return err
	}
	h = append(h, entries...)
	h = h[max(0, len(h)-plans.HistoryLength):]
	value, _ := json.Marshal(h)
	return c.a.Net.Call(adapter.Sending(ctx), true, func(ctx context.Context) error {
		ok, _, err := c.a.API.KV().CAS(&api.KVPair{Key: HistoryPrefix + project, Value: value, ModifyIndex: index}, (&api.WriteOptions{}).WithContext(ctx))
		if err == nil && !ok {
			return fmt.Errorf("%s%s was written by someone else while the lock was held", HistoryPrefix, project)
		}
		return c.a.StatusError(err)
	})
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
func (c *Cluster) Elect(ctx context.Context, project string, changed func(bool), log func(string, ...any)) {
	lock, err := c.a.API.LockOpts(&api.LockOptions{Key: WatchPrefix + project, SessionName: "provision watch " + project,
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

// Spanning is the cluster of a project that spans datacenters: its own
// datacenter's (the embedded Cluster), which keeps the project's record
// and history and elects its healer, and the others', in each of which
// the project's lock is taken too.
type Spanning struct {
	*Cluster
	Others []*Cluster
}

// Lock takes the project's lock in each datacenter, its own first, then
// the others in their order (the consul blocks' order: two runs never
// wait for each other crosswise), before anything is sent. The returned
// context ends when any of them is lost; unlock releases them in reverse.
// A lock that cannot be taken releases those taken, and its error names
// its datacenter.
func (s Spanning) Lock(ctx context.Context, project, operation string, wait time.Duration) (context.Context, func(), error) {
	held, unlock, err := s.Cluster.Lock(ctx, project, operation, wait)
	if err != nil {
		return nil, nil, err
	}
	unlocks, taken := []func(){unlock}, []string{fmt.Sprintf("%q", s.a.Conf.Datacenter)}
	release := func() {
		for i := len(unlocks) - 1; i >= 0; i-- {
			unlocks[i]()
		}
	}
	for _, c := range s.Others {
		next, unlock, err := c.Lock(held, project, operation, wait)
		if err != nil {
			if cause := context.Cause(held); errors.Is(cause, provision.ErrLockLost) {
				err = cause // a lock taken before was lost while this one was asked for
			}
			release()
			return nil, nil, fmt.Errorf("in datacenter %q (the lock in %s was taken and released): %w", c.a.Conf.Datacenter, strings.Join(taken, ", "), err)
		}
		held = next
		unlocks, taken = append(unlocks, unlock), append(taken, fmt.Sprintf("%q", c.a.Conf.Datacenter))
	}
	return held, release, nil
}
