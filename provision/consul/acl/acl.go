// Package acl is what provision asks of a Consul agent's ACLs: the
// permissions a project's token needs, in the terms of Consul's rules and
// of its authorize endpoint, the policy that grants them, and the
// judgement of a token's answers as diagnostics at the declarations that
// need them. The roles (the agent's services, the KV store, the cluster's
// coordination) say which permissions their writes need.
package acl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision"
	"github.com/provision-dev/provision/provision/addrs"
	"github.com/provision-dev/provision/provision/consul/client"
	"github.com/provision-dev/provision/provision/plans"
)

// State is what an agent's answers to a plan's reads say of its ACLs
// (Consul 1.15: X-Consul-Default-ACL-Policy on every answer,
// X-Consul-Results-Filtered-By-ACLs when a token's read was filtered).
type State struct {
	Deny     bool `json:"default_deny,omitempty"`
	Filtered bool `json:"filtered,omitempty"`
	// Allowed are, under default deny, the answers to what a plan of the
	// specs may need (Permission.String(): allowed); Unchecked says why
	// they could not be asked ("" when they were, or when the agent runs
	// no ACLs).
	Allowed   map[string]bool `json:"allowed,omitempty"`
	Unchecked string          `json:"unchecked,omitempty"`
	// Node is the node of the agent that holds the lock, where its
	// session is written; read under default deny only.
	Node string `json:"node,omitempty"`
}

// Read is what the headers of an agent's answers say of its ACLs.
func (st *State) Read(h http.Header) {
	st.Deny = st.Deny || h.Get("X-Consul-Default-ACL-Policy") == "deny"
	st.Filtered = st.Filtered || h.Get("X-Consul-Results-Filtered-By-ACLs") == "true"
}

// Permission is one thing the token must be allowed, in the terms of
// Consul's rules and of its authorize endpoint.
type Permission struct {
	Resource string `json:"resource"` // service, key, key_prefix, session, agent
	Segment  string `json:"segment"`
	Access   string `json:"access"` // read, write
	// Why says what needs it, for a person.
	Why string `json:"why"`
	// At is the declaration that needs it; Addrs are the objects whose
	// writes need it.
	At    *hcl.Range   `json:"-"`
	Addrs []addrs.Addr `json:"-"`
}

func (p Permission) String() string {
	return fmt.Sprintf("%s:%s on %q", p.Resource, p.Access, p.Segment)
}

// PolicyRules renders permissions as Consul ACL rules in HCL, ready for
// consul acl policy create -rules - or PUT /v1/acl/policy.
func PolicyRules(perms []Permission) string {
	var b strings.Builder
	for _, p := range perms {
		fmt.Fprintf(&b, "# %s\n%s %q {\n  policy = %q\n}\n\n", p.Why, p.Resource, p.Segment, p.Access)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// authorizeBatch is how many checks Consul takes in one authorize request.
const authorizeBatch = 64

// Authorize asks the agent whether the token may do each of perms:
// POST /v1/internal/acl/authorize (Consul 1.15, the endpoint its UI uses).
func Authorize(ctx context.Context, a *client.Agent, perms []Permission) ([]bool, error) {
	var out []bool
	for lo := 0; lo < len(perms); lo += authorizeBatch {
		batch := perms[lo:min(lo+authorizeBatch, len(perms))]
		type check struct{ Resource, Segment, Access string }
		checks := make([]check, len(batch))
		for i, p := range batch {
			checks[i] = check{p.Resource, p.Segment, p.Access}
		}
		body, _ := json.Marshal(checks)
		var answer []struct{ Allow bool }
		req := plans.Request{Method: http.MethodPost, Path: "/v1/internal/acl/authorize", Body: body, Idempotent: true}
		got, err := a.Sender().Send(ctx, req, 1<<20)
		if err == nil {
			err = json.Unmarshal(got, &answer)
		}
		if err != nil {
			return nil, err
		}
		if len(answer) != len(batch) {
			return nil, fmt.Errorf("authorize answered %d results for %d checks", len(answer), len(batch))
		}
		for _, a := range answer {
			out = append(out, a.Allow)
		}
	}
	return out, nil
}

// Ask asks the agent whether the token may do each of perms, and
// returns the answers by Permission.String(); or, when they cannot be
// had, why, in words for a warning. A Consul without ACLs answers nothing
// and has nothing to check.
func Ask(ctx context.Context, a *client.Agent, perms []Permission) (map[string]bool, string) {
	if len(perms) == 0 {
		return nil, ""
	}
	allowed, err := Authorize(ctx, a, perms)
	if client.Disabled(err) {
		return nil, ""
	}
	if err != nil {
		return nil, err.Error()
	}
	out := make(map[string]bool, len(perms))
	for i, p := range perms {
		out[p.String()] = allowed[i]
	}
	return out, ""
}

// JudgeRead judges perms by what a read asked the agent (st): a
// permission it did not ask counts as allowed, as a 403 would still say.
func JudgeRead(a *client.Agent, st State, perms []Permission) hcl.Diagnostics {
	if len(perms) == 0 {
		return nil
	}
	if st.Unchecked != "" {
		return Judge(a, perms, nil, errors.New(st.Unchecked), false)
	}
	allowed := make([]bool, len(perms))
	for i, p := range perms {
		ok, asked := st.Allowed[p.String()]
		allowed[i] = ok || !asked
	}
	return Judge(a, perms, allowed, nil, false)
}

// Judge is an error at the declaration for each permission the token
// lacks, as allowed answers (anonymous: they are the anonymous token's);
// a Consul without ACLs has nothing to check, and one that cannot answer
// (an older one without the authorize endpoint, or none at all: err)
// gets a warning, with the error.
func Judge(a *client.Agent, perms []Permission, allowed []bool, err error, anonymous bool) hcl.Diagnostics {
	if client.Disabled(err) {
		return nil
	}
	if err == nil && anonymous && slices.Contains(allowed, false) {
		return hcl.Diagnostics{a.NoToken()}
	}
	if err != nil {
		return hcl.Diagnostics{{Severity: hcl.DiagWarning, Summary: "Cannot check the token's permissions",
			Detail:  fmt.Sprintf("Asking %s whether the token may do what the plan needs (POST /v1/internal/acl/authorize, Consul 1.15): %s. A missing permission shows as a 403 when the request is sent.", a.Address(), err),
			Subject: a.Where.Ptr()}}
	}
	var diags hcl.Diagnostics
	for i, p := range perms {
		if allowed[i] {
			continue
		}
		at := p.At
		if at == nil {
			at = a.Where.Ptr()
		}
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Missing ACL permission",
			Detail: fmt.Sprintf("The Consul token lacks %s (for %s), as %s answers. The request would be refused with 403, and retrying will not help, so nothing is sent. "+
				"Give the token a policy with the rules provision policy prints for these specs.", p, p.Why, a.Address()),
			Subject: at,
			Extra:   provision.Denied{Addrs: p.Addrs},
		})
	}
	return diags
}
