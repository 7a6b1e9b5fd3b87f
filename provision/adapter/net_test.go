package adapter

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/provision-dev/provision/provision/plans"
)

// TestSlowDownIsWaitedFor: a server that answers 429 (with Retry-After)
// and then 503 marked as its rate limit gets the same request again, a
// write that is not idempotent too, each wait told to the context's
// Waiting function, and the waits are not counted as attempts (Attempts
// is 1 here: one failure of another kind would end the call).
func TestSlowDownIsWaitedFor(t *testing.T) {
	var got []string
	answers := []func(http.ResponseWriter){
		func(w http.ResponseWriter) {
			w.Header().Set("Retry-After", "1")
			http.Error(w, "too many", http.StatusTooManyRequests)
		},
		func(w http.ResponseWriter) {
			http.Error(w, "rate limit exceeded for operation that can only be performed by the leader, try again later", http.StatusServiceUnavailable)
		},
		func(w http.ResponseWriter) { w.Write([]byte("true")) },
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Method+" "+r.URL.Path)
		answers[0](w)
		answers = answers[1:]
	}))
	defer srv.Close()
	s := Sender{
		Net: Deadlines{Request: 5 * time.Second, Attempts: 1, Backoff: 10 * time.Millisecond},
		Do: func(r *http.Request) (*http.Response, error) {
			r.URL.Scheme, r.URL.Host = "http", strings.TrimPrefix(srv.URL, "http://")
			return http.DefaultClient.Do(r)
		},
		Refuse: func(code int, _ string, body []byte) error {
			return &StatusError{Code: code, Message: string(body), SlowDown: code == 503 && strings.Contains(string(body), "rate limit exceeded")}
		},
	}
	var waits []time.Duration
	ctx := Waiting(context.Background(), func(pause time.Duration, why error) {
		if !SlowDown(why) {
			t.Errorf("told of a wait for %v, which is no slow-down", why)
		}
		waits = append(waits, pause)
	})
	body, err := s.Send(ctx, plans.Request{Method: http.MethodPut, Path: "/v1/kv/a?cas=0"}, 100)
	if err != nil || string(body) != "true" {
		t.Fatalf("Send = %q, %v; want the third answer", body, err)
	}
	if len(got) != 3 || len(waits) != 2 {
		t.Fatalf("%d requests and %d waits, want 3 and 2: %v %v", len(got), len(waits), got, waits)
	}
	if waits[0] != time.Second {
		t.Errorf("the wait after Retry-After: 1 was %v", waits[0])
	}
	if waits[1] < 10*time.Millisecond || waits[1] > 20*time.Millisecond {
		t.Errorf("the second wait, without Retry-After, was %v; want between half the doubled backoff and the doubled backoff (10ms to 20ms)", waits[1])
	}
}

// TestSlowDownEndsWithTheCommand: a server that never stops saying slow
// down holds a read until the command's context ends, and an apply's
// request (Sending) until the apply is stopped; neither is retried past
// it.
func TestSlowDownEndsWithTheCommand(t *testing.T) {
	d := Deadlines{Request: time.Second, Attempts: 3, Backoff: 5 * time.Millisecond}
	slow := &StatusError{Code: 429, Message: "slow down", SlowDown: true}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	n := 0
	err := d.Call(ctx, true, func(context.Context) error { n++; return slow })
	if !errors.Is(err, context.DeadlineExceeded) || n < 3 {
		t.Errorf("a read against a server that always says slow down: %v after %d attempts; want the command's deadline after more than Attempts", err, n)
	}

	parent, stop := context.WithCancel(context.Background())
	n = 0
	err = d.Call(Sending(parent), false, func(context.Context) error {
		if n++; n == 5 {
			stop()
		}
		return slow
	})
	if err != slow || n != 5 {
		t.Errorf("an apply's write stopped while the server says slow down: %v after %d attempts; want the slow-down after the 5th", err, n)
	}

	// Stopped during a long pause: the wait ends at once, and no attempt
	// follows.
	parent, stop = context.WithCancel(context.Background())
	long := &StatusError{Code: 429, Message: "slow down", SlowDown: true, RetryAfter: 5 * time.Second}
	n = 0
	time.AfterFunc(50*time.Millisecond, stop)
	began := time.Now()
	err = d.Call(Sending(parent), false, func(context.Context) error { n++; return long })
	if err != long || n != 1 || time.Since(began) > 2*time.Second {
		t.Errorf("an apply stopped during a 5 s Retry-After: %v after %d attempts and %v; want the slow-down at once, after the one attempt", err, n, time.Since(began))
	}
}

// TestRetryAfter reads both forms of Retry-After (RFC 9110, 10.2.3).
func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		in   string
		want time.Duration
	}{
		{"", 0},
		{"3", 3 * time.Second},
		{"-1", 0},
		{"Mon, 07 Dec 2026 09:00:02 GMT", 2 * time.Second},
		{"Mon, 07 Dec 2026 08:59:00 GMT", 0},
		{"soon", 0},
	} {
		if got := retryAfter(c.in, now); got != c.want {
			t.Errorf("retryAfter(%q) = %v, want %v", c.in, got, c.want)
		}
	}
}
