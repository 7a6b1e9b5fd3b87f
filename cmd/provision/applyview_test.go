package main

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/provision-dev/provision/provision"
	"github.com/provision-dev/provision/provision/plans"
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
