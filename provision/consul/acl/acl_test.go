package acl_test

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision"
	"github.com/provision-dev/provision/provision/addrs"
	"github.com/provision-dev/provision/provision/consul"
	"github.com/provision-dev/provision/provision/consul/acl"
	"github.com/provision-dev/provision/provision/consul/client"
	"github.com/provision-dev/provision/provision/internal/backendtest"
	"github.com/provision-dev/provision/provision/servers"
)

// TestPolicyGrantsThePermissions: the rules PolicyRules writes, made a
// token's policy on a real agent under default deny, allow exactly the
// permissions they were written from, as the agent's authorize endpoint
// answers (which takes key and not key_prefix: a key under the prefix is
// asked); what they leave out is judged missing, at its declaration.
func TestPolicyGrantsThePermissions(t *testing.T) {
	agent := servers.NewACLConsul(t)
	at := &hcl.Range{Filename: "main.hcl", Start: hcl.Pos{Line: 7, Column: 1}}
	granted := []acl.Permission{
		{Resource: "service", Segment: "web", Access: "write", Why: "register service web-1", At: at},
		{Resource: "key", Segment: "app/y", Access: "write", Why: "the key app/y"},
		{Resource: "key", Segment: "provision/locks/p", Access: "write", Why: "the apply lock"},
	}
	rules := acl.PolicyRules(append([]acl.Permission{granted[0], {Resource: "key_prefix", Segment: "app/", Access: "write", Why: "the keys under app/"}}, granted[2:]...))
	if !strings.Contains(rules, "# register service web-1\nservice \"web\" {\n  policy = \"write\"\n}") {
		t.Errorf("rules:\n%s", rules)
	}
	a := backendtest.ConsulAgent(t, agent.URL, agent.NewToken(t, "granted", rules))
	missing := []acl.Permission{
		{Resource: "service", Segment: "db", Access: "write", Why: "register service db-1", At: at, Addrs: []addrs.Addr{{Kind: consul.Service, Name: "db-1"}}},
		{Resource: "key", Segment: "other/x", Access: "write", Why: "a key elsewhere"},
	}
	perms := append(append([]acl.Permission{}, granted...), missing...)
	ctx := context.Background()
	allowed, err := acl.Authorize(ctx, a, perms)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range perms {
		if allowed[i] != (i < len(granted)) {
			t.Errorf("%s: allowed %v", p, allowed[i])
		}
	}
	diags := acl.Judge(a, perms, allowed, nil, false)
	if len(diags) != len(missing) {
		t.Fatalf("judged: %v", diags)
	}
	if d := diags[0]; d.Summary != "Missing ACL permission" || d.Subject.Start.Line != 7 || !strings.Contains(d.Detail, `service:write on "db" (for register service db-1)`) ||
		len(d.Extra.(provision.Denied).Addrs) != 1 {
		t.Errorf("the missing service: %s: %s at %v", d.Summary, d.Detail, d.Subject)
	}
	if d := diags[1]; d.Subject.Filename != "main.hcl" || d.Subject.Start.Line != 0 {
		t.Errorf("a permission no declaration needs is at the agent's block: %v", d.Subject)
	}

	// A read's answers judge the same, and what it did not ask counts as
	// allowed (a 403 would still say).
	got, unchecked := acl.Ask(ctx, a, perms[:4])
	if unchecked != "" || len(got) != 4 || got[perms[3].String()] {
		t.Errorf("Ask: %v, %q", got, unchecked)
	}
	if diags := acl.JudgeRead(a, acl.State{Deny: true, Allowed: got}, perms); len(diags) != 1 || !strings.Contains(diags[0].Detail, `"db"`) {
		t.Errorf("JudgeRead: %v", diags)
	}
	if diags := acl.JudgeRead(a, acl.State{Deny: true, Unchecked: "no authorize endpoint"}, perms); len(diags) != 1 || diags[0].Severity != hcl.DiagWarning {
		t.Errorf("JudgeRead without answers: %v", diags)
	}

	// Without a token, every denial is the anonymous token's.
	anonymous := backendtest.ConsulAgent(t, agent.URL, "")
	allowed, err = acl.Authorize(ctx, anonymous, granted)
	if diags := acl.Judge(anonymous, granted, allowed, err, true); len(diags) != 1 || diags[0].Summary != "No Consul ACL token" {
		t.Errorf("anonymous: %v %v", diags, err)
	}
}

// TestWithoutACLs: an agent that runs no ACLs answers the authorize
// endpoint 401 "ACL support disabled", and nothing is checked.
func TestWithoutACLs(t *testing.T) {
	agent := servers.NewConsul(t)
	a := backendtest.ConsulAgent(t, "http://"+agent.Addr, "")
	perms := []acl.Permission{{Resource: "service", Segment: "web", Access: "write"}}
	allowed, err := acl.Authorize(context.Background(), a, perms)
	if !client.Disabled(err) {
		t.Fatalf("authorize without ACLs: %v, %v", allowed, err)
	}
	if diags := acl.Judge(a, perms, allowed, err, true); diags != nil {
		t.Errorf("judged without ACLs: %v", diags)
	}
	if got, unchecked := acl.Ask(context.Background(), a, perms); got != nil || unchecked != "" {
		t.Errorf("asked without ACLs: %v, %q", got, unchecked)
	}
}
