package consul

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/hashicorp/consul/api"
	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision"
	"github.com/provision-dev/provision/provision/adapter"
	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/schema"
)

// aclState is what an agent's answers to a plan's reads say of its ACLs
// (Consul 1.15: X-Consul-Default-ACL-Policy on every answer,
// X-Consul-Results-Filtered-By-ACLs when a token's read was filtered).
type aclState struct {
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

// Permission is one thing the token must be allowed, in the terms of
// Consul's rules and of its authorize endpoint.
type Permission struct {
	Resource string `json:"resource"` // service, key, session, agent
	Segment  string `json:"segment"`
	Access   string `json:"access"` // read, write
	// Why says what needs it, for a person.
	Why string `json:"why"`
	// at is the declaration that needs it; addrs are the objects whose
	// writes need it.
	at    *hcl.Range
	addrs []plans.Addr
}

func (p Permission) String() string {
	return fmt.Sprintf("%s:%s on %q", p.Resource, p.Access, p.Segment)
}

// Permissions are what the specs' project needs of a token, least first:
// write on each service name it registers or deregisters (deleting: the
// names of owned services no longer declared, where known), write on its
// two keys (the lock and the record), and, on the node of the agent that
// holds the lock (empty when not known), write on sessions and read of
// the agent (whose node name the policy looks up).
func Permissions(cfg *schema.Config, deleting []string, node string) []Permission {
	var out []Permission
	names := map[string]bool{}
	for _, s := range cfg.Services {
		if !names[s.Name] {
			names[s.Name] = true
			out = append(out, Permission{Resource: "service", Segment: s.Name, Access: "write", Why: "register service " + s.ID, at: s.DeclRange.Ptr()})
		}
	}
	for _, n := range deleting {
		if !names[n] {
			names[n] = true
			out = append(out, Permission{Resource: "service", Segment: n, Access: "write", Why: "deregister owned services named " + n + ", no longer declared"})
		}
	}
	prefixes := map[string]bool{}
	for _, k := range cfg.Keys {
		if p := k.Prefix(); !prefixes[p] {
			prefixes[p] = true
			out = append(out, Permission{Resource: "key_prefix", Segment: p, Access: "write", Why: "the keys the specs declare under " + strconv.Quote(p), at: k.DeclRange.Ptr()})
		}
	}
	removedKeys := false
	for _, r := range cfg.Removed {
		if r.Kind != "key" {
			continue
		}
		removedKeys = true
		if p := (&schema.Key{Path: r.Name}).Prefix(); !prefixes[p] {
			prefixes[p] = true
			out = append(out, Permission{Resource: "key_prefix", Segment: p, Access: "write", Why: "the keys removed blocks name under " + strconv.Quote(p), at: r.DeclRange.Ptr()})
		}
	}
	at := cfg.ProjectRange.Ptr()
	if len(cfg.Keys) > 0 || removedKeys {
		out = append(out, Permission{Resource: "key_prefix", Segment: KeysPrefix + cfg.Project + "/", Access: "write", Why: "the records of the project's keys", at: at})
	}
	out = append(out,
		Permission{Resource: "key", Segment: LockPrefix + cfg.Project, Access: "write", Why: "the apply lock", at: at},
		Permission{Resource: "key", Segment: RecordPrefix + cfg.Project, Access: "write", Why: "the record of the project's agents", at: at})
	if node != "" {
		out = append(out,
			Permission{Resource: "session", Segment: node, Access: "write", Why: "the lock's session, on the node of the agent that holds it", at: at},
			Permission{Resource: "agent", Segment: node, Access: "read", Why: "provision policy looks up that node's name", at: at})
	}
	return out
}

// WatchPermission is what provision watch needs beyond an apply's
// permissions: the key of its leader election (its session is on the
// lock's node, like the lock's).
func WatchPermission(cfg *schema.Config) Permission {
	return Permission{Resource: "key", Segment: WatchPrefix + cfg.Project, Access: "write", Why: "provision watch: the election of the project's healer", at: cfg.ProjectRange.Ptr()}
}

// PolicyRules renders permissions as Consul ACL rules in HCL, ready for
// consul acl policy create -rules @- or PUT /v1/acl/policy.
func PolicyRules(perms []Permission) string {
	var b strings.Builder
	for _, p := range perms {
		fmt.Fprintf(&b, "# %s\n%s %q {\n  policy = %q\n}\n\n", p.Why, p.Resource, p.Segment, p.Access)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// NodeName is the node of the agent, from GET /v1/agent/self (which needs
// agent:read).
func (b *Backend) NodeName(ctx context.Context) (string, error) {
	var self struct{ Config struct{ NodeName string } }
	err := b.net.Call(ctx, true, func(ctx context.Context) error {
		_, err := b.client.Raw().Query("/v1/agent/self", &self, (&api.QueryOptions{}).WithContext(ctx))
		return b.statusError(err)
	})
	return self.Config.NodeName, err
}

// Version is the agent's Consul version, from GET /v1/agent/self (which
// needs agent:read): "Consul 1.15.4", or "" when it cannot be read.
func (b *Backend) Version(ctx context.Context) string {
	var self struct{ Config struct{ Version string } }
	err := b.net.Call(ctx, true, func(ctx context.Context) error {
		_, err := b.client.Raw().Query("/v1/agent/self", &self, (&api.QueryOptions{}).WithContext(ctx))
		return b.statusError(err)
	})
	if err != nil || self.Config.Version == "" {
		return ""
	}
	return "Consul " + self.Config.Version
}

// Owned are the names of the services of the project on this agent that
// the specs no longer declare: a policy must let the token deregister them.
func (b *Backend) Owned(ctx context.Context) ([]string, error) {
	st, err := b.read(ctx)
	if err != nil {
		return nil, err
	}
	declared := map[string]bool{}
	for _, s := range b.cfg.Services {
		declared[s.ID] = true
	}
	var out []string
	for id, s := range st.Services {
		if adapter.OwnerOf(s.Meta) == b.cfg.Project && !declared[id] && !slices.Contains(out, s.Service) {
			out = append(out, s.Service)
		}
	}
	slices.Sort(out)
	return out, nil
}

// authorizeBatch is how many checks Consul takes in one authorize request.
const authorizeBatch = 64

// authorize asks the agent whether the token may do each of perms:
// POST /v1/internal/acl/authorize (Consul 1.15, the endpoint its UI uses).
func (b *Backend) authorize(ctx context.Context, perms []Permission) ([]bool, error) {
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
		got, err := b.sender().Send(ctx, req, 1<<20)
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

// writable are the permissions a plan of the specs on this agent may
// need, from its state: write on the name of every service declared here
// and of every service of the project here (a delete), and, on the agent
// that holds the lock, the lock's.
func (b *Backend) writable(st agentState) []Permission {
	var perms []Permission
	seen := map[string]bool{}
	add := func(name string) {
		if !seen[name] {
			seen[name] = true
			perms = append(perms, Permission{Resource: "service", Segment: name, Access: "write"})
		}
	}
	for _, s := range b.cfg.Services {
		if b.agent == nil || s.Agent == b.agent.Name {
			add(s.Name)
		}
	}
	for _, id := range sortedIDs(st.Services) {
		add(st.Services[id].Service)
	}
	return append(perms, b.lockPerms(st.ACL.Node)...)
}

// Permit says, from what the read asked the agent, whether the token may
// send every write of the plan's changes and, on the agent that holds the
// lock, take the lock and write the record.
//
// It is the backend's Permit: it runs once the plan keeps only what it
// will send (-target, -exclude), and only where the agent denies by
// default (one without ACLs has nothing to check).
func (b *Backend) Permit(st plans.State, changes []*plans.Change) hcl.Diagnostics {
	as := st.(agentState)
	if !as.ACL.Deny {
		return nil
	}
	var perms []Permission
	at := map[string]int{}
	for _, c := range changes {
		if len(c.Requests) == 0 {
			continue
		}
		var obj struct{ Name string }
		side := c.After
		if c.Action == plans.Delete {
			side = c.Before
		}
		if json.Unmarshal(side, &obj) != nil || obj.Name == "" {
			continue
		}
		if i, ok := at[obj.Name]; ok {
			perms[i].addrs = append(perms[i].addrs, c.Addr)
			continue
		}
		at[obj.Name] = len(perms)
		perms = append(perms, Permission{Resource: "service", Segment: obj.Name, Access: "write", Why: c.Action.String() + " " + c.Addr.String(), at: c.DeclRange(), addrs: []plans.Addr{c.Addr}})
	}
	return b.judgeRead(as.ACL, append(perms, b.lockPerms(as.ACL.Node)...))
}

// judgeRead judges perms by what the read asked the agent (acl): a
// permission it did not ask counts as allowed, as a 403 would still say.
func (b *Backend) judgeRead(acl aclState, perms []Permission) hcl.Diagnostics {
	if len(perms) == 0 {
		return nil
	}
	if acl.Unchecked != "" {
		return b.judge(perms, nil, errors.New(acl.Unchecked), false)
	}
	allowed := make([]bool, len(perms))
	for i, p := range perms {
		ok, asked := acl.Allowed[p.String()]
		allowed[i] = ok || !asked
	}
	return b.judge(perms, allowed, nil, false)
}

// Preflight is the permission check of an apply before its lock: whether
// the token may register every service in scope that the specs declare
// on this agent and, on the agent that holds the lock, take the lock and write the
// record. One authorize request (per 64 permissions), after a GET
// /v1/agent/self on the agent that holds the lock; an agent without ACLs
// answers it 401 "ACL support disabled", and nothing is checked.
func (b *Backend) Preflight(ctx context.Context, scope func(plans.Addr) bool) hcl.Diagnostics {
	var perms []Permission
	for _, p := range Permissions(b.cfg, nil, "") {
		if p.Resource == "service" && slices.ContainsFunc(b.cfg.Services, func(s *schema.Service) bool {
			return s.Name == p.Segment && (b.agent == nil || s.Agent == b.agent.Name) && scope(plans.Addr{In: b.in, Kind: "service", Name: s.ID})
		}) {
			perms = append(perms, p)
		}
	}
	if b.locker {
		node, _ := b.NodeName(ctx) // without agent:read, the session is checked when the lock is taken
		perms = append(perms, b.lockPerms(node)...)
	}
	if len(perms) == 0 {
		return nil
	}
	allowed, err := b.authorize(ctx, perms)
	if adapter.Unanswered(err) {
		// An agent that does not answer stops the apply here, as its read
		// would: nothing is locked or sent.
		return hcl.Diagnostics{b.unreadable(err)}
	}
	return b.judge(perms, allowed, err, b.conf.Token == "")
}

// lockPerms are what the agent that holds the lock needs besides: its
// keys, and a session on its node (when its name is known); none on
// another agent.
func (b *Backend) lockPerms(node string) []Permission {
	if !b.locker {
		return nil
	}
	var out []Permission
	for _, p := range Permissions(&schema.Config{Project: b.cfg.Project, ProjectRange: b.cfg.ProjectRange}, nil, node) {
		if p.Resource != "agent" {
			out = append(out, p)
		}
	}
	return out
}

// ask asks the agent whether the token may do each of perms, and
// returns the answers by Permission.String(); or, when they cannot be
// had, why, in words for a warning. A Consul without ACLs answers nothing
// and has nothing to check.
func (b *Backend) ask(ctx context.Context, perms []Permission) (map[string]bool, string) {
	if len(perms) == 0 {
		return nil, ""
	}
	allowed, err := b.authorize(ctx, perms)
	if disabled(err) {
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

func disabled(err error) bool {
	var se *adapter.StatusError
	return errors.As(err, &se) && se.Code == http.StatusUnauthorized && strings.Contains(se.Message, "ACL support disabled")
}

// judge is an error at the declaration for each permission the token
// lacks, as allowed answers (anonymous: they are the anonymous token's);
// a Consul without ACLs has nothing to check, and one that cannot answer
// (an older one without the authorize endpoint, or none at all: err)
// gets a warning, with the error.
func (b *Backend) judge(perms []Permission, allowed []bool, err error, anonymous bool) hcl.Diagnostics {
	if disabled(err) {
		return nil
	}
	if err == nil && anonymous && slices.Contains(allowed, false) {
		return hcl.Diagnostics{b.noToken()}
	}
	if err != nil {
		return hcl.Diagnostics{{Severity: hcl.DiagWarning, Summary: "Cannot check the token's permissions",
			Detail:  fmt.Sprintf("Asking %s whether the token may do what the plan needs (POST /v1/internal/acl/authorize, Consul 1.15): %s. A missing permission shows as a 403 when the request is sent.", b.address(), err),
			Subject: b.where.Ptr()}}
	}
	var diags hcl.Diagnostics
	for i, p := range perms {
		if allowed[i] {
			continue
		}
		at := p.at
		if at == nil {
			at = b.where.Ptr()
		}
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Missing ACL permission",
			Detail: fmt.Sprintf("The Consul token lacks %s (for %s), as %s answers. The request would be refused with 403, and retrying will not help, so nothing is sent. "+
				"Give the token a policy with the rules provision policy prints for these specs.", p, p.Why, b.address()),
			Subject: at,
			Extra:   provision.Denied{Addrs: p.addrs},
		})
	}
	return diags
}

// aclDiagnostics are what the ACLs of the agent, as read, say about the
// plan: a read the agent filtered hides objects (a warning). (Under
// default deny, a read with the anonymous token is refused: it would
// read an empty agent and plan false creates.)
func (b *Backend) aclDiagnostics(st agentState) hcl.Diagnostics {
	switch {
	case st.ACL.Filtered:
		return hcl.Diagnostics{{
			Severity: hcl.DiagWarning,
			Summary:  "The token hides objects of the agent",
			Detail: fmt.Sprintf("%s filtered its answer for this token (X-Consul-Results-Filtered-By-ACLs): services it may not read are not in the plan, so an owned service it cannot see is neither deleted nor checked for conflicts. "+
				"Give the token service:read (service:write implies it) on every service name the project has; provision policy prints the rules.", b.address()),
			Subject: b.where.Ptr(),
		}}
	}
	return nil
}

// noToken is the error of a run without a token on an agent whose ACLs
// deny by default.
func (b *Backend) noToken() *hcl.Diagnostic {
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  "No Consul ACL token",
		Detail: fmt.Sprintf("%s runs ACLs and no token was given: the anonymous token reads nothing under default_policy deny (so a plan would show every service as new) and may not write what the specs need. "+
			"Set CONSUL_HTTP_TOKEN (or CONSUL_HTTP_TOKEN_FILE) to a token with the policy provision policy prints.", b.address()),
		Subject: b.where.Ptr(),
	}
}

// answered is the engine's error for an answer of the agent outside 2xx.
// A 403 says which permission it lacks, that retrying will not help, and
// where the policy comes from.
func (b *Backend) answered(code int, msg string) error {
	msg = strings.TrimSpace(msg)
	text := fmt.Sprintf("consul answered %d: %s", code, msg)
	if code == http.StatusForbidden {
		why := "the token lacks this permission on " + b.address()
		if strings.Contains(msg, "ACL not found") {
			why = b.address() + " does not know the token (unknown, or deleted)"
		}
		text = fmt.Sprintf("consul answered 403 Forbidden: %s (%s; retrying will not help: give the token the policy provision policy prints)", strings.TrimSuffix(msg, "."), why)
	}
	return &adapter.StatusError{Code: code, Message: text, Leaderless: leaderless(code, msg)}
}

// leaderless says whether an answer of Consul is that the servers have no
// leader to forward a request to: at a leader's death, for about a second,
// its RPC connection is refused ("rpc error getting client: failed to get
// conn", "lead thread didn't get connection"); without a quorum, "No
// cluster leader" (as Consul's servers answer them, measured on
// Consul 1.15.4: three servers, the leader killed). The request never
// reached a leader, so it was not applied.
func leaderless(code int, msg string) bool {
	if code != http.StatusInternalServerError {
		return false
	}
	for _, s := range []string{"No cluster leader", "rpc error getting client", "failed to get conn", "lead thread didn't get connection", "No known Consul servers"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// statusError turns the API client's error for an answer outside 2xx into
// the engine's, so that a 5xx is retried, a 4xx is a refusal and the
// reason is quoted.
func (b *Backend) statusError(err error) error {
	var se api.StatusError
	if errors.As(err, &se) {
		return b.answered(se.Code, se.Body)
	}
	return err
}

// tlsSetting names the setting a TLS failure points at, or "".
func tlsSetting(err error) string {
	var alert tls.AlertError
	var unknown x509.UnknownAuthorityError
	var host x509.HostnameError
	var header tls.RecordHeaderError
	// A TLS alert from the server reaches a TCP client as an unexported
	// type behind "remote error: tls: ..."; only QUIC's is an AlertError.
	text := fmt.Sprint(err)
	switch {
	case errors.As(err, &alert) && (alert == 116 || alert == 42), // certificate_required, bad_certificate
		strings.Contains(text, "tls: certificate required"), strings.Contains(text, "tls: bad certificate"):
		return "the agent requires a client certificate: set CONSUL_CLIENT_CERT and CONSUL_CLIENT_KEY to the PEM files of one its CA signed"
	case errors.As(err, &unknown):
		return "the agent's certificate is signed by an authority this machine does not trust: set CONSUL_CACERT to the CA's PEM file (consul-agent-ca.pem)"
	case errors.As(err, &host):
		return "the agent's certificate is not for the name in the address: set CONSUL_TLS_SERVER_NAME to a name it is for (Consul's own are server.<datacenter>.consul and localhost)"
	case errors.As(err, &header):
		return "the agent does not speak TLS at this address: use http:// (or CONSUL_HTTP_SSL=false), or the agent's HTTPS port"
	case strings.Contains(text, "server gave HTTP response to HTTPS client"):
		return "the agent answers plain HTTP at this address: use http:// and its HTTP port, or the agent's HTTPS port"
	}
	return ""
}
