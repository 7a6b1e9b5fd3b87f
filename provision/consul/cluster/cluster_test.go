package cluster_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/consul/api"
	"github.com/provision-dev/provision/provision/adapter"
	"github.com/provision-dev/provision/provision/consul/cluster"
	"github.com/provision-dev/provision/provision/internal/backendtest"
	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/provision/servers"
)

// TestLock: on a real agent, a held lock is refused to a second run with
// its holder named, after the wait; released, it is taken.
func TestLock(t *testing.T) {
	agent := servers.NewConsul(t)
	first, second := cluster.New(backendtest.ConsulAgent(t, "http://"+agent.Addr, "")), cluster.New(backendtest.ConsulAgent(t, "http://"+agent.Addr, ""))
	ctx := context.Background()
	lctx, unlock, err := first.Lock(ctx, "p", "apply", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, _, err = second.Lock(ctx, "p", "destroy", 300*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "the lock provision/locks/p is held: apply by ") || !strings.Contains(err.Error(), "waited 300ms (-lock-timeout)") {
		t.Errorf("a held lock: %v", err)
	}
	if waited := time.Since(start); waited < 300*time.Millisecond {
		t.Errorf("gave up after %s", waited)
	}
	unlock()
	if lctx.Err() == nil {
		t.Error("the lock's context lives on after unlock")
	}
	_, unlock, err = second.Lock(ctx, "p", "destroy", time.Second)
	if err != nil {
		t.Fatalf("the released lock: %v", err)
	}
	unlock()
}

// TestRecord: the agents of a complete apply are recorded (those the
// specs declare services on), read back, and an agent the next plan does
// not read is warned about.
func TestRecord(t *testing.T) {
	agent := servers.NewConsul(t)
	c := cluster.New(backendtest.ConsulAgent(t, "http://"+agent.Addr, ""))
	ctx := context.Background()
	scope := func(ids ...string) json.RawMessage { return adapter.RawJSON(map[string]any{"ids": ids}) }
	backends := []plans.BackendInfo{
		{Name: "agent.a", Kind: "consul", Address: "http://10.0.0.1:8500", Scope: scope("web-1")},
		{Name: "agent.b", Kind: "consul", Address: "http://10.0.0.2:8500", Scope: scope()},
		{Name: "t1", Kind: "elasticsearch", Address: "http://10.0.0.3:9200"},
	}
	if rec := c.Recorded(ctx, "p"); rec.Error != "" || len(rec.Agents) != 0 {
		t.Fatalf("a project never applied: %+v", rec)
	}
	if err := c.Remember(ctx, "p", backends, nil); err != nil {
		t.Fatal(err)
	}
	rec := c.Recorded(ctx, "p")
	if len(rec.Agents) != 1 || rec.Agents["agent.a"] != "http://10.0.0.1:8500" {
		t.Fatalf("recorded: %+v", rec)
	}
	if diags := c.Forgotten(rec, "p", backends, nil); len(diags) != 0 {
		t.Errorf("every agent read: %v", diags)
	}
	diags := c.Forgotten(rec, "p", backends[1:], nil)
	if len(diags) != 1 || diags[0].Summary != "Services on an agent this plan does not read" || !strings.Contains(diags[0].Detail, "agent.a at http://10.0.0.1:8500") {
		t.Errorf("an agent block gone: %v", diags)
	}
	if err := c.Remember(ctx, "p", nil, nil); err != nil {
		t.Fatal(err)
	}
	if pair, _, err := backendtest.ConsulAgent(t, "http://"+agent.Addr, "").API.KV().Get(cluster.RecordPrefix+"p", nil); err != nil || pair != nil {
		t.Errorf("after a destroy the record is deleted: %v, %v", pair, err)
	}
}

// TestElect: of two watchers, one leads; when it stops, the other does.
func TestElect(t *testing.T) {
	agent := servers.NewConsul(t)
	leads := make(chan int, 8)
	elect := func(ctx context.Context, n int) {
		cluster.New(backendtest.ConsulAgent(t, "http://"+agent.Addr, "")).Elect(ctx, "p", func(leading bool) {
			if leading {
				leads <- n
			}
		}, t.Logf)
	}
	ctx1, stop1 := context.WithCancel(context.Background())
	ctx2, stop2 := context.WithCancel(context.Background())
	defer stop2()
	go elect(ctx1, 1)
	var first int
	select {
	case first = <-leads:
	case <-time.After(15 * time.Second):
		t.Fatal("no watcher leads in 15 s")
	}
	go elect(ctx2, 2)
	select {
	case n := <-leads:
		t.Fatalf("watcher %d leads while watcher %d does", n, first)
	case <-time.After(time.Second):
	}
	stop1()
	select {
	case n := <-leads:
		if n != 2 {
			t.Errorf("watcher %d leads again", n)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the second watcher does not lead in 15 s after the first stopped")
	}
}

// TestHistory: on a real agent, entries appended after applies are read
// back oldest first, only the newest plans.HistoryLength are kept, and a
// key that holds no history is an error, not an empty one.
func TestHistory(t *testing.T) {
	agent := servers.NewConsul(t)
	c := cluster.New(backendtest.ConsulAgent(t, "http://"+agent.Addr, ""))
	ctx := context.Background()
	if h, err := c.History(ctx, "p"); err != nil || len(h) != 0 {
		t.Fatalf("a project never applied: %v %v", h, err)
	}
	at := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	var want []plans.Applied
	for i := range plans.HistoryLength + 2 {
		e := plans.Applied{Commit: fmt.Sprintf("m%d", i), Change: fmt.Sprint(i), Digest: "d", Job: "https://ci/1", At: at}
		want = append(want, e)
		if err := c.Append(ctx, "p", []plans.Applied{e}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := c.History(ctx, "p")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want[2:], got); diff != "" {
		t.Errorf("the history (-want +got):\n%s", diff)
	}
	consul, _ := api.NewClient(&api.Config{Address: agent.Addr})
	if _, err := consul.KV().Put(&api.KVPair{Key: cluster.HistoryPrefix + "q", Value: []byte("{}")}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.History(ctx, "q"); err == nil || !strings.Contains(err.Error(), "provision/history/q is not a history of applies") {
		t.Errorf("a key that holds no history: %v", err)
	}
}
