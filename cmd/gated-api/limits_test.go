package main

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/consul/api"
	"github.com/provision-dev/provision/provision/servers"
)

// syncBuffer is a log written by the watcher and read by the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestLimitsKey: against a real Consul agent, the limits come from the
// key the specs write, at start and after an edit (a blocking query, no
// restart); a key made invalid keeps the limits in force; a missing key
// or one given with -auth-burst stops the start.
func TestLimitsKey(t *testing.T) {
	agent := servers.NewConsul(t)
	client, err := api.NewClient(&api.Config{Address: agent.Addr})
	if err != nil {
		t.Fatal(err)
	}
	kv := client.KV()
	const key = "apps/billing/limits"
	put := func(v string) {
		t.Helper()
		if _, err := kv.Put(&api.KVPair{Key: key, Value: []byte(v)}, nil); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("CONSUL_HTTP_ADDR", agent.Addr)
	t.Setenv("GATED_API_TOKENS", hashLine("alice", testToken))
	var stderr bytes.Buffer
	if code := run([]string{"-limits-key", key, "-listen", "127.0.0.1:0"}, nil, &stderr, &stderr); code != 1 || !strings.Contains(stderr.String(), `the limits key "apps/billing/limits" does not exist`) {
		t.Fatalf("a missing key: exit %d, %q", code, stderr.String())
	}
	stderr.Reset()
	if code := run([]string{"-limits-key", key, "-auth-burst", "3"}, nil, &stderr, &stderr); code != 2 || !strings.Contains(stderr.String(), "not both") {
		t.Fatalf("-limits-key with -auth-burst: exit %d, %q", code, stderr.String())
	}

	put(`{"rate": 100, "burst": 20}`)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	l, index, err := readLimits(ctx, kv, key, 0)
	if err != nil || l != (limits{Rate: 100, Burst: 20}) {
		t.Fatalf("readLimits: %+v, %v", l, err)
	}
	lim := newLimiter(l.Rate, l.Burst, nil)
	var log syncBuffer
	done := make(chan struct{})
	go func() { watchLimits(ctx, kv, key, index, lim, &log); close(done) }()
	current := func() (float64, float64) {
		lim.mu.Lock()
		defer lim.mu.Unlock()
		return lim.rate, lim.burst
	}
	waitFor := func(rate, burst float64) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if r, b := current(); r == rate && b == burst {
				return
			}
		}
		r, b := current()
		t.Fatalf("limits %v a second, burst %v; want %v, %v (log %q)", r, b, rate, burst, log.String())
	}
	put(`{"rate": 2, "burst": 5}`)
	waitFor(2, 5)
	put(`{"rate": 0, "burst": 5}`)
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(log.String(), "the rate must be above 0"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("an invalid key is not logged: %q", log.String())
		}
	}
	waitFor(2, 5)
	cancel()
	<-done
}
