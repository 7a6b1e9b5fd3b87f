package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/provision-dev/provision/provision"
	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/provision/run"
)

// TestOneCauseOneError: 300 document writes of one batch that failed for
// one reason are one error naming how many and which; a change that
// failed otherwise is its own.
func TestOneCauseOneError(t *testing.T) {
	bulk := plans.Request{Method: "POST", Path: "/_bulk?refresh=true", Batch: true}
	timeout := errors.New("no answer within 10s")
	var res provision.Result
	for i := range 300 {
		c := &plans.Change{Addr: plans.Addr{Kind: "document", Name: fmt.Sprintf(".dashboard/search/s%03d", i)}, Requests: []plans.Request{bulk}}
		res.Outcomes = append(res.Outcomes, provision.Outcome{Change: c, Err: timeout})
	}
	other := &plans.Change{Addr: plans.Addr{Kind: "service", Name: "api"}, Requests: []plans.Request{{Method: "PUT", Path: "/v1/agent/service/register"}}}
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

// TestOneCauseOneLine: the items of one batch that failed the same way
// are one line of progress and a count, not one line each.
func TestOneCauseOneLine(t *testing.T) {
	var out bytes.Buffer
	c := newCLI(strings.NewReader(""), &out, io.Discard)
	v := asker(c)
	bulk := plans.Request{Method: "POST", Path: "/_bulk?refresh=true", Batch: true}
	timeout := errors.New("no answer within 10s")
	for i := range 300 {
		c := &plans.Change{Addr: plans.Addr{Kind: "document", Name: fmt.Sprintf(".dashboard/search/s%03d", i)}, Requests: []plans.Request{bulk}}
		v.Progress(run.Progress{Event: provision.Event{Change: c, Step: 1, Request: bulk, Done: true, Err: timeout}, Done: i + 1, Total: 301})
	}
	ok := &plans.Change{Addr: plans.Addr{Kind: "service", Name: "api"}}
	v.Progress(run.Progress{Event: provision.Event{Change: ok, Step: 1, Request: plans.Request{Method: "PUT", Path: "/v1/agent/service/register"}, Done: true}, Done: 301, Total: 301})
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], `[1/301] document[".dashboard/search/s000"]: POST /_bulk?refresh=true: FAILED`) ||
		lines[1] != "  ... and 299 more changes FAILED the same way" || !strings.Contains(lines[2], "[301/301] service.api: PUT /v1/agent/service/register: ok") {
		t.Errorf("progress:\n%s", out.String())
	}
}
