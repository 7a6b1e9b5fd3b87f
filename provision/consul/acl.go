package consul

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision/adapter"
	"github.com/provision-dev/provision/provision/addrs"
	"github.com/provision-dev/provision/provision/consul/acl"
	"github.com/provision-dev/provision/provision/consul/cluster"
	"github.com/provision-dev/provision/provision/consul/kv"
	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/schema"
)

// Permissions are what the specs' project needs of a token, least first:
// write on each service name it registers or deregisters (deleting: the
// names of owned services no longer declared, where known) and on each
// external node its services are on, what its keys
// need (kv.Permissions), and what the cluster's coordination needs
// (cluster.Permissions: the lock, the record and, on the node of the
// agent that holds the lock when it is known, sessions and agent read).
func Permissions(cfg *schema.Config, deleting []string, node string) []acl.Permission {
	var out []acl.Permission
	names := map[string]bool{}
	nodes := map[string]bool{}
	for _, s := range Services(cfg) {
		if !names[s.Service] {
			names[s.Service] = true
			out = append(out, acl.Permission{Resource: "service", Segment: s.Service, Access: "write", Why: "register service " + s.Name, At: s.DeclRange.Ptr()})
		}
		if s.Node != "" && !nodes[s.Node] {
			nodes[s.Node] = true
			out = append(out, acl.Permission{Resource: "node", Segment: s.Node, Access: "write", Why: "register service " + s.Name + " on the external node " + s.Node + " through the catalog", At: s.NodeRange.Ptr()})
		}
	}
	for _, n := range deleting {
		if !names[n] {
			names[n] = true
			out = append(out, acl.Permission{Resource: "service", Segment: n, Access: "write", Why: "deregister owned services named " + n + ", no longer declared"})
		}
	}
	out = append(out, kv.Permissions(cfg)...)
	return append(out, cluster.Permissions(cfg.Project, cfg.ProjectRange.Ptr(), node, true)...)
}

// Version is the agent's Consul version: "Consul 1.15.4", or "" when it
// cannot be read.
func (b *Backend) Version(ctx context.Context) string { return b.c.Version(ctx) }

// Owned are the names of the services of the project on this agent that
// the specs no longer declare: a policy must let the token deregister them.
func (b *Backend) Owned(ctx context.Context) ([]string, error) {
	st, err := b.read(ctx)
	if err != nil {
		return nil, err
	}
	declared := map[string]bool{}
	for _, s := range b.services {
		declared[s.Name] = true
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

// writable are the permissions a plan of the specs on this agent may
// need, from its state: write on the name of every service declared here
// and of every service of the project here (a delete), and, on the agent
// that holds the lock, the lock's.
func (b *Backend) writable(st agentState) []acl.Permission {
	var perms []acl.Permission
	seen := map[string]bool{}
	add := func(name string) {
		if !seen[name] {
			seen[name] = true
			perms = append(perms, acl.Permission{Resource: "service", Segment: name, Access: "write"})
		}
	}
	for _, s := range b.services {
		if b.agent == nil || s.Agent == b.agent.Name {
			add(s.Service)
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
	var perms []acl.Permission
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
		if json.Unmarshal(side.JSON(), &obj) != nil || obj.Name == "" {
			continue
		}
		if i, ok := at[obj.Name]; ok {
			perms[i].Addrs = append(perms[i].Addrs, c.Addr)
			continue
		}
		at[obj.Name] = len(perms)
		perms = append(perms, acl.Permission{Resource: "service", Segment: obj.Name, Access: "write", Why: c.Action.String() + " " + c.Addr.String(), At: c.DeclRange(), Addrs: []addrs.Addr{c.Addr}})
	}
	return acl.JudgeRead(b.c, as.ACL, append(perms, b.lockPerms(as.ACL.Node)...))
}

// Preflight is the permission check of an apply before its lock: whether
// the token may register every service in scope that the specs declare
// on this agent and, on the agent that holds the lock, take the lock and write the
// record. One authorize request (per 64 permissions), after a GET
// /v1/agent/self on the agent that holds the lock; an agent without ACLs
// answers it 401 "ACL support disabled", and nothing is checked.
func (b *Backend) Preflight(ctx context.Context, scope func(addrs.Addr) bool) hcl.Diagnostics {
	// The names of the services this agent registers in scope, found
	// once: looking each permission's up among every service was
	// quadratic (30,000 services over 20 agents: 72 s of an 84 s apply).
	names := map[string]bool{}
	for _, s := range b.services {
		if (b.agent == nil || s.Agent == b.agent.Name) && scope(addrs.Addr{In: b.in, Kind: Service, Name: s.Name}) {
			names[s.Service] = true
		}
	}
	var perms []acl.Permission
	for _, p := range Permissions(b.cfg, nil, "") {
		if p.Resource == "service" && names[p.Segment] {
			perms = append(perms, p)
		}
	}
	if b.locker {
		node, _ := b.c.NodeName(ctx) // without agent:read, the session is checked when the lock is taken
		perms = append(perms, b.lockPerms(node)...)
	}
	if len(perms) == 0 {
		return nil
	}
	allowed, err := acl.Authorize(ctx, b.c, perms)
	if adapter.Unanswered(err) {
		// An agent that does not answer stops the apply here, as its read
		// would: nothing is locked or sent.
		return hcl.Diagnostics{b.c.Unreadable(err)}
	}
	return acl.Judge(b.c, perms, allowed, err, b.c.Conf.Token == "")
}

// lockPerms are what the agent that holds the lock needs besides: its
// keys, and a session on its node (when its name is known); none on
// another agent.
func (b *Backend) lockPerms(node string) []acl.Permission {
	if !b.locker {
		return nil
	}
	return cluster.Permissions(b.cfg.Project, b.cfg.ProjectRange.Ptr(), node, false)
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
				"Give the token service:read (service:write implies it) on every service name the project has; provision policy prints the rules.", b.c.Address()),
			Subject: b.c.Where.Ptr(),
		}}
	}
	return nil
}
