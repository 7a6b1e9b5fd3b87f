package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/provision-dev/provision/provision"
	"github.com/provision-dev/provision/provision/adapter"
	"github.com/provision-dev/provision/provision/addrs"
	"github.com/provision-dev/provision/provision/consul"
	"github.com/provision-dev/provision/provision/consul/kv"
	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/provision/run"
	"github.com/provision-dev/provision/provision/search"
)

// TestOneCauseOneError: 300 document writes of one batch that failed for
// one reason are one error naming how many and which; a change that
// failed otherwise is its own.
func TestOneCauseOneError(t *testing.T) {
	bulk := plans.Request{Method: "POST", Path: "/_bulk?refresh=true", Batch: true}
	timeout := errors.New("no answer within 10s")
	var res provision.Result
	for i := range 300 {
		c := &plans.Change{Addr: addrs.Addr{Kind: search.Document, Name: fmt.Sprintf(".dashboard/search/s%03d", i)}, Requests: []plans.Request{bulk}}
		res.Outcomes = append(res.Outcomes, provision.Outcome{Change: c, Err: timeout})
	}
	other := &plans.Change{Addr: addrs.Addr{Kind: consul.Service, Name: "api"}, Requests: []plans.Request{{Method: "PUT", Path: "/v1/agent/service/register"}}}
	res.Outcomes = append(res.Outcomes, provision.Outcome{Change: other, Err: errors.New("connection refused")})
	diags := outcomeDiagnostics(res)
	if len(diags) != 2 {
		t.Fatalf("%d diagnostics, want 2: %v", len(diags), diags)
	}
	if d := diags[0].Detail; !strings.HasPrefix(d, `300 changes (document[".dashboard/search/s000"], `) || !strings.Contains(d, "and 295 more): request 1 of 1 (POST /_bulk?refresh=true) failed: no answer within 10s") {
		t.Errorf("the batch's diagnostic: %s", d)
	}
	if d := diags[1].Detail; !strings.HasPrefix(d, "service.api: request 1 of 1 (PUT /v1/agent/service/register) failed: connection refused") {
		t.Errorf("the other diagnostic: %s", d)
	}
}

// TestOneCauseManyPaths: writes to one backend that fail the same way
// at different paths (a server gone: each error names its URL and the
// local port of its attempt) are one diagnostic, which names every
// address in -json; the same error from another backend is another.
func TestOneCauseManyPaths(t *testing.T) {
	var res provision.Result
	for i := range 10 {
		path := fmt.Sprintf("/v1/kv/apps/k%d", i)
		c := &plans.Change{Addr: addrs.Addr{Kind: kv.Key, Name: fmt.Sprintf("apps/k%d", i)}, Backend: "consul", Requests: []plans.Request{{Method: "PUT", Path: path}}}
		err := fmt.Errorf(`Put "http://127.0.0.1:8500%s": read tcp 127.0.0.1:%d->127.0.0.1:8500: read: connection reset by peer`, path, 40000+i)
		res.Outcomes = append(res.Outcomes, provision.Outcome{Change: c, Err: err})
	}
	other := &plans.Change{Addr: addrs.Addr{Kind: kv.Key, Name: "apps/other"}, Backend: "agent.b", Requests: []plans.Request{{Method: "PUT", Path: "/v1/kv/apps/other"}}}
	res.Outcomes = append(res.Outcomes, provision.Outcome{Change: other, Err: errors.New(`Put "http://127.0.0.2:8500/v1/kv/apps/other": read tcp 127.0.0.1:40100->127.0.0.2:8500: read: connection reset by peer`)})
	diags := outcomeDiagnostics(res)
	if len(diags) != 2 || !strings.HasPrefix(diags[0].Detail, `10 changes (key["apps/k0"], key["apps/k1"], key["apps/k2"], key["apps/k3"], key["apps/k4"], and 5 more): a PUT request each (the first /v1/kv/apps/k0) failed`) {
		t.Fatalf("%d diagnostics, want 2, the first for the 10 keys:\n%v", len(diags), diags)
	}
	j := plans.JSONDiagnostics(diags)
	if len(j[0].Addresses) != 10 || j[0].Addresses[9] != `key["apps/k9"]` || j[1].Addresses != nil {
		t.Errorf("addresses in -json: %q and %q", j[0].Addresses, j[1].Addresses)
	}
}

// TestOneCauseOneLine: the items of one batch that failed the same way
// are one line of progress and a count, not one line each.
func TestOneCauseOneLine(t *testing.T) {
	var out bytes.Buffer
	c := testCLI(strings.NewReader(""), &out, io.Discard)
	v := asker(c)
	bulk := plans.Request{Method: "POST", Path: "/_bulk?refresh=true", Batch: true}
	timeout := errors.New("no answer within 10s")
	for i := range 300 {
		c := &plans.Change{Addr: addrs.Addr{Kind: search.Document, Name: fmt.Sprintf(".dashboard/search/s%03d", i)}, Requests: []plans.Request{bulk}}
		v.Progress(run.Progress{Event: provision.Event{Change: c, Step: 1, Request: bulk, Done: true, Err: timeout}, Done: i + 1, Total: 301})
	}
	ok := &plans.Change{Addr: addrs.Addr{Kind: consul.Service, Name: "api"}}
	v.Progress(run.Progress{Event: provision.Event{Change: ok, Step: 1, Request: plans.Request{Method: "PUT", Path: "/v1/agent/service/register"}, Done: true}, Done: 301, Total: 301})
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], `[1/301] document[".dashboard/search/s000"]: POST /_bulk?refresh=true: FAILED`) ||
		lines[1] != "  ... and 299 more changes FAILED the same way" || !strings.Contains(lines[2], "[301/301] service.api: PUT /v1/agent/service/register: ok") {
		t.Errorf("progress:\n%s", out.String())
	}
}

// TestSlowDownSaidOnceASecond: a server that tells many requests to wait
// at once is one line, with its answer and the pause; the waits it asks
// for within the next second are counted, not printed, and said with the
// next line; another backend's waits have their own line.
func TestSlowDownSaidOnceASecond(t *testing.T) {
	var out, errOut bytes.Buffer
	v := asker(testCLI(strings.NewReader(""), &out, &errOut))
	v.started = true
	slow := &adapter.StatusError{Code: 503, Message: "consul answered 503: rate limit exceeded for operation that can only be performed by the leader, try again later", SlowDown: true}
	wait := func(backend, key string) run.Progress {
		c := &plans.Change{Addr: addrs.Addr{Kind: kv.Key, Name: key}, Backend: backend}
		return run.Progress{Event: provision.Event{Change: c, Step: 1, Request: plans.Request{Method: "PUT", Path: "/v1/txn"}, Wait: 480 * time.Millisecond, Err: slow}, Done: 3, Total: 10}
	}
	for i := range 5 {
		v.Progress(wait("kv", fmt.Sprintf("apps/k%d", i)))
	}
	v.Progress(wait("agent.b", "apps/b"))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	want := []string{
		`[3/10] key["apps/k0"]: PUT /v1/txn: the server says slow down (consul answered 503: rate limit exceeded for operation that can only be performed by the leader, try again later): waiting 480ms`,
		`[3/10] key["apps/b"]: PUT /v1/txn: the server says slow down (consul answered 503: rate limit exceeded for operation that can only be performed by the leader, try again later): waiting 480ms`,
	}
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Fatalf("the waits said (-want +got):\n%s", diff)
	}
	v.waits["kv"].said = time.Now().Add(-time.Second) // a second later
	out.Reset()
	v.Progress(wait("kv", "apps/k5"))
	if got := out.String(); !strings.HasSuffix(got, "waiting 480ms (5 requests told to wait since the last line)\n") {
		t.Errorf("the next line, a second later: %q", got)
	}
}
