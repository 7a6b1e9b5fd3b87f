// Package connect opens the backends a spec needs: the one place that
// knows the concrete adapters (Consul agents, search clusters, Traefik
// proxies), and the blocks of the kinds and places they serve (Kinds,
// Places), which a binary's language names. The run
// (provision/run) and the watcher ask it for backends, for the Consul
// agent that holds the project's lock and record, and the policy command
// for the project's ACL policy; none of them sees an adapter itself.
package connect

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision"
	"github.com/provision-dev/provision/provision/adapter"
	"github.com/provision-dev/provision/provision/addrs"
	"github.com/provision-dev/provision/provision/consul"
	"github.com/provision-dev/provision/provision/consul/acl"
	"github.com/provision-dev/provision/provision/consul/client"
	"github.com/provision-dev/provision/provision/consul/cluster"
	"github.com/provision-dev/provision/provision/consul/kv"
	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/provision/policies"
	"github.com/provision-dev/provision/provision/search"
	"github.com/provision-dev/provision/provision/traefik"
	"github.com/provision-dev/provision/schema"
)

// Kinds are the blocks of the kinds of object the backends Open opens
// serve, and Places the blocks that say where those backends are: the
// language of the specs it opens, which a binary's main names in its
// own (schema.NewLanguage).
func Kinds() []*schema.KindSchema {
	return []*schema.KindSchema{consul.ServiceBlock, search.IndexBlock, search.DocumentBlock, kv.KeyBlock}
}

// Places: see Kinds.
func Places() []*schema.PlaceSchema {
	return []*schema.PlaceSchema{consul.SettingsPlace, consul.AgentPlace, consul.ProxyPlace, search.SearchPlace, traefik.ProxyPlace}
}

// RemoveIndices is the search clusters' option of a run's plans.Removal
// (-indices, -prune-indices).
const RemoveIndices = search.RemoveIndices

// Removal is r with every option of the backends Open opens, each false
// unless r gives it, and no other: what a destroy plan records
// ({"indices": false} when nothing asked for the indices).
func Removal(r plans.Removal) plans.Removal {
	return plans.Removal{RemoveIndices: r[RemoveIndices]}
}

// PolicyKinds are what policies see of each kind of Kinds.
func PolicyKinds() []policies.Kind {
	return []policies.Kind{consul.ServicePolicy, kv.KeyPolicy, search.IndexPolicy, search.DocumentPolicy}
}

// Options are how a run opens its backends: everything a backend takes
// is given here, at construction.
type Options struct {
	// Env reads the environment (ELASTICSEARCH_URL, TRAEFIK_API_*, ...;
	// Consul's own variables are read by its API client).
	Env       func(string) string
	Deadlines adapter.Deadlines
	// Mode is what the plan the backends are opened for does: converge or
	// destroy.
	Mode plans.Mode
	// Remove is what the run removes of the data a backend keeps unless
	// asked: RemoveIndices, the search clusters' indices, those no longer
	// declared (-prune-indices) or, on a destroy, all (-indices).
	Remove plans.Removal
	// Unplanned opens the backends for what plans nothing (a policy, the
	// watcher's change feeds): the search clusters, which hold no part of
	// either, are not opened.
	Unplanned bool
	// Replace are the owned services to register again in place.
	Replace []addrs.Addr
	// LeftOut are the agents a run leaves out (-exclude agent.<name>):
	// neither opened nor read, nor their services proved.
	LeftOut []addrs.Addr
	// VerifyTimeout bounds the proof through the proxies.
	VerifyTimeout time.Duration
	// Others open the backends of the binary's own kinds, which this
	// package does not know, after its own.
	Others []Opener
}

// Opener opens the backends of kinds this package does not know (a
// binary's own, named in its language beside Kinds), as Open opens the
// others: with the specs and the run's options, its diagnostics at the
// blocks they concern.
type Opener func(cfg *schema.Config, o Options) ([]provision.Backend, hcl.Diagnostics)

// Opened are the backends of a run and the cluster's agent.
type Opened struct {
	Backends []provision.Backend
	// Cluster holds the project's lock and record; nil when the specs use
	// no Consul. When its agent is one of the Backends (the one agent, or
	// the first agent block), it shares that backend's client, as the KV
	// store does: one client per agent.
	Cluster Cluster
	// agents are the Consul agents among Backends, which a policy asks
	// for the project's services.
	agents []*consul.Backend
	// catalog is the backend of the external nodes when the specs
	// declare none of their services: not among Backends unless the
	// project's record names it (Recalled).
	catalog *consul.External
}

// Recalled is the backend the project's record rec names that the specs
// no longer declare and the run still reads, so that the project's
// objects there are deleted: the external nodes' ("catalog", once the
// last of their services is removed from the specs); nil for none.
func (o *Opened) Recalled(rec *plans.Record) provision.Backend {
	if o.catalog == nil || rec == nil {
		return nil
	}
	if _, had := rec.Agents[o.catalog.Info().Name]; !had {
		return nil
	}
	b := o.catalog
	o.catalog = nil
	o.Backends = append(o.Backends, b)
	return b
}

// Open opens every backend the specs need and the cluster's agent.
func Open(cfg *schema.Config, o Options) (Opened, hcl.Diagnostics) {
	var opened Opened
	co := consul.Options{Deadlines: o.Deadlines, Replace: o.Replace, LeftOut: o.LeftOut, Getenv: o.Env}
	agents, diags := consul.New(cfg, co)
	opened.agents = agents
	var out []provision.Backend
	var clusterAgent *client.Agent
	for _, k := range agents {
		out = append(out, k)
		if k.HoldsLock() {
			clusterAgent = k.Agent()
		}
	}
	uses, store := consul.Uses(cfg, co), kv.New(cfg, "")
	if clusterAgent == nil && (uses && !diags.HasErrors() || store != nil) {
		var cdiags hcl.Diagnostics
		clusterAgent, cdiags = consul.ClusterAgent(cfg, co)
		diags = append(diags, cdiags...)
	}
	var own *cluster.Cluster
	if clusterAgent != nil && uses {
		own = cluster.New(clusterAgent)
		opened.Cluster = own
		if ext := consul.NewExternal(cfg, clusterAgent, co); ext.Declares() {
			out = append(out, ext)
		} else {
			opened.catalog = ext
		}
	}
	if store != nil && clusterAgent != nil {
		store.Open(clusterAgent)
		out = append(out, store)
	}
	if own != nil && len(consul.Datacenters(cfg)) > 0 {
		spanning := cluster.Spanning{Cluster: own}
		for _, s := range consul.Datacenters(cfg) {
			agent, adiags := consul.DatacenterAgent(s, co)
			diags = append(diags, adiags...)
			if agent == nil {
				continue
			}
			spanning.Others = append(spanning.Others, cluster.New(agent))
			// Another datacenter's store is read even with no key there
			// (kv.New).
			store := kv.New(cfg, s.Name)
			store.Open(agent)
			out = append(out, store)
		}
		opened.Cluster = spanning
	}
	if !o.Unplanned {
		sbs, sdiags := search.New(cfg, search.Options{Env: o.Env, Deadlines: o.Deadlines, Mode: o.Mode, Prune: o.Remove[RemoveIndices]})
		out = append(out, sbs...)
		diags = append(diags, sdiags...)
	}
	out = append(out, traefik.New(cfg, traefik.Options{Routes: consul.Routes{}, Env: o.Env, Deadlines: o.Deadlines, Wait: o.VerifyTimeout, LeftOut: o.LeftOut})...)
	for _, open := range o.Others {
		bs, odiags := open(cfg, o)
		out = append(out, bs...)
		diags = append(diags, odiags...)
	}
	opened.Backends = out
	return opened, diags
}

// Cluster is the Consul agent that holds the project's lock, the record
// of the agents its services are on and the history of its applies.
type Cluster interface {
	provision.Locker
	// Address is the base URL of the agent it is reached through.
	Address() string
	// Recorded reads the record of the agents the project's services were
	// on at its last complete apply.
	Recorded(ctx context.Context, project string) *plans.Record
	// Forgotten warns about agents of the record that the plan does not
	// read, but those left out (-exclude agent.<name>: their backends'
	// names).
	Forgotten(rec *plans.Record, project string, backends []plans.BackendInfo, leftOut []string) hcl.Diagnostics
	// Remember records the agents after a complete apply, those kept (left
	// out, or read by a partial apply) that the specs hold nothing on as
	// they were.
	Remember(ctx context.Context, project string, backends []plans.BackendInfo, kept []string) error
	// History reads the project's history of applies, oldest first;
	// Append adds to it, after an apply completed, under the lock.
	History(ctx context.Context, project string) ([]plans.Applied, error)
	Append(ctx context.Context, project string, entries []plans.Applied) error
	// NodeName is the name of the agent's node, where the lock's session
	// is written.
	NodeName(ctx context.Context) (string, error)
	// Elect takes part in the election of the project's healer (provision
	// watch -heal) until ctx ends; changed is told of each change of
	// leadership, log of trouble.
	Elect(ctx context.Context, project string, changed func(bool), log func(string, ...any))
}

// StateDecoders are the kinds of backend whose states in a snapshot
// decode without their declaration, for provision.Snapshot.DecodeEarly:
// Consul agents', most of a large snapshot.
func StateDecoders() map[string]provision.StateDecoder {
	return map[string]provision.StateDecoder{consul.Kind: consul.DecodeState}
}

// LockKey is the KV key of the project's lock; RecordKey that of its
// record; HistoryKey that of its history of applies.
func LockKey(project string) string    { return cluster.LockPrefix + project }
func RecordKey(project string) string  { return cluster.RecordPrefix + project }
func HistoryKey(project string) string { return cluster.HistoryPrefix + project }

// Policy is the least-privilege Consul ACL policy of the specs.
type Policy struct {
	// Rules are the permissions in Consul's rule language.
	Rules       string           `json:"rules"`
	Permissions []acl.Permission `json:"permissions"`
}

// MakePolicy asks the agents what the specs cannot say: the node name of
// the agent that holds the lock (unless node gives it), and the names of
// the project's services there that the specs no longer declare, which the
// token must still be allowed to deregister. An agent that cannot be read
// leaves those out, with a warning. watch adds what provision watch needs.
func MakePolicy(ctx context.Context, cfg *schema.Config, opened Opened, node string, watch bool) (Policy, hcl.Diagnostics) {
	var diags hcl.Diagnostics
	if k := opened.Cluster; k != nil && node == "" {
		name, err := k.NodeName(ctx)
		if err != nil {
			return Policy{}, append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Cannot look up the lock's node",
				Detail: fmt.Sprintf("The lock's session is written on the node of %s, whose name is read with GET /v1/agent/self: %s. "+
					"Run provision policy with a token that may read the agent, or give the node's name with -node.", k.Address(), err),
				Subject: cfg.ProjectRange.Ptr()})
		}
		node = name
	}
	var deleting []string
	for _, agent := range opened.agents {
		owned, err := agent.Owned(ctx)
		if err != nil {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagWarning, Summary: "Owned services not looked up",
				Detail:  fmt.Sprintf("Reading %s: %s. The project's services there that the specs no longer declare are not in the policy; deregistering them would be refused.", agent.Info().Address, err),
				Subject: cfg.ProjectRange.Ptr()})
			continue
		}
		deleting = append(deleting, owned...)
	}
	perms := consul.Permissions(cfg, deleting, node)
	if spanning, ok := opened.Cluster.(cluster.Spanning); ok {
		for _, other := range spanning.Others {
			name, err := other.NodeName(ctx)
			if err != nil {
				diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagWarning, Summary: "Lock's node not looked up",
					Detail:  fmt.Sprintf("The lock's session in another datacenter is written on the node of %s, whose name is read with GET /v1/agent/self: %s. The policy lacks session write on that node; taking the lock there would be refused.", other.Address(), err),
					Subject: cfg.ProjectRange.Ptr()})
				continue
			}
			perms = append(perms, cluster.NodePermissions(name, cfg.ProjectRange.Ptr(), true)...)
		}
	}
	if watch {
		perms = append(perms, cluster.WatchPermission(cfg.Project, cfg.ProjectRange.Ptr()))
	}
	return Policy{Permissions: perms, Rules: acl.PolicyRules(perms)}, diags
}
