// Package connect opens the backends a spec needs: the one place that
// knows the concrete adapters (Consul agents, search clusters, Traefik
// proxies). The CLI asks it for backends, for the Consul agent that holds
// the project's lock and record, and for the project's ACL policy; it
// never sees an adapter itself.
package connect

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision"
	"github.com/provision-dev/provision/provision/consul"
	"github.com/provision-dev/provision/provision/search"
	"github.com/provision-dev/provision/provision/traefik"
	"github.com/provision-dev/provision/schema"
)

// DefaultVerifyTimeout bounds, by default, the proof through the declared
// proxies after an apply.
const DefaultVerifyTimeout = traefik.DefaultWait

// Options are how a command opens its backends.
type Options struct {
	// Env reads the environment (ELASTICSEARCH_URL, TRAEFIK_API_*, ...;
	// Consul's own variables are read by its API client).
	Env       func(string) string
	Deadlines provision.Deadlines
	// Indices opens the search clusters too (destroy without -indices
	// leaves them out).
	Indices bool
	// PruneIndices deletes the project's indices no longer declared.
	PruneIndices bool
	// Replace are the owned services to register again in place.
	Replace []provision.Addr
	// VerifyTimeout bounds the proof through the proxies.
	VerifyTimeout time.Duration
}

// Backends opens every backend the specs need, with the options applied.
func Backends(cfg *schema.Config, o Options) ([]provision.Backend, hcl.Diagnostics) {
	out, diags := consul.New(cfg)
	if o.Indices {
		sbs, sdiags := search.New(cfg, o.Env)
		out = append(out, sbs...)
		diags = append(diags, sdiags...)
	}
	out = append(out, traefik.New(cfg, o.Env, o.VerifyTimeout)...)
	provision.SetDeadlines(out, o.Deadlines)
	for _, b := range out {
		switch b := b.(type) {
		case *search.Backend:
			if o.PruneIndices {
				b.PruneIndices()
			}
		case *consul.Backend:
			if len(o.Replace) > 0 {
				b.Replace(o.Replace)
			}
		}
	}
	return out, diags
}

// Cluster is the Consul agent that holds the project's lock and the
// record of the agents its services are on.
type Cluster interface {
	provision.Locker
	Info() provision.BackendInfo
	// Forgotten warns about agents of the record the plan does not read.
	Forgotten(ctx context.Context, project string, backends []provision.BackendInfo) hcl.Diagnostics
	// Remember records the agents after a complete apply.
	Remember(ctx context.Context, project string, backends []provision.BackendInfo) error
}

// OpenCluster opens the cluster's agent; nil when the specs use no Consul.
func OpenCluster(cfg *schema.Config, o Options) (Cluster, hcl.Diagnostics) {
	k, diags := consul.Locker(cfg)
	if k == nil {
		return nil, diags
	}
	k.SetDeadlines(o.Deadlines)
	return k, diags
}

// LockKey is the KV key of the project's lock; RecordKey that of its record.
func LockKey(project string) string   { return consul.LockPrefix + project }
func RecordKey(project string) string { return consul.RecordPrefix + project }

// Permission is one ACL permission the project's token needs.
type Permission = consul.Permission

// Policy is the least-privilege Consul ACL policy of the specs.
type Policy struct {
	Permissions []Permission
	// Rules are the permissions in Consul's rule language.
	Rules string
}

// MakePolicy asks the agents what the specs cannot say: the node name of
// the agent that holds the lock (unless node gives it), and the names of
// the project's services there that the specs no longer declare, which the
// token must still be allowed to deregister. An agent that cannot be read
// leaves those out, with a warning.
func MakePolicy(ctx context.Context, cfg *schema.Config, o Options, node string) (Policy, hcl.Diagnostics) {
	k, diags := consul.Locker(cfg)
	if diags.HasErrors() {
		return Policy{}, diags
	}
	if k != nil && node == "" {
		k.SetDeadlines(o.Deadlines)
		name, err := k.NodeName(ctx)
		if err != nil {
			return Policy{}, append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Cannot look up the lock's node",
				Detail: fmt.Sprintf("The lock's session is written on the node of %s, whose name is read with GET /v1/agent/self: %s. "+
					"Run provision policy with a token that may read the agent, or give the node's name with -node.", k.Info().Address, err),
				Subject: cfg.ProjectRange.Ptr()})
		}
		node = name
	}
	bs, bdiags := consul.New(cfg)
	if diags = append(diags, bdiags...); diags.HasErrors() {
		return Policy{}, diags
	}
	provision.SetDeadlines(bs, o.Deadlines)
	var deleting []string
	for _, b := range bs {
		owned, err := b.(*consul.Backend).Owned(ctx)
		if err != nil {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagWarning, Summary: "Owned services not looked up",
				Detail:  fmt.Sprintf("Reading %s: %s. The project's services there that the specs no longer declare are not in the policy; deregistering them would be refused.", b.Info().Address, err),
				Subject: cfg.ProjectRange.Ptr()})
			continue
		}
		deleting = append(deleting, owned...)
	}
	perms := consul.Permissions(cfg, deleting, node)
	return Policy{Permissions: perms, Rules: consul.PolicyRules(perms)}, diags
}
