package consul

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/hashicorp/consul/api"
	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision/adapter"
	"github.com/provision-dev/provision/provision/plans"
)

// RecordPrefix is the KV folder of the record of each project's agents:
// where its services were registered at its last complete apply. An agent
// block that goes away, or an address that changes, would otherwise
// silently leave the services there unread and never pruned.
const RecordPrefix = "provision/agents/"

// agentsOf is each Consul backend of a plan by name ("consul" or
// "agent.<name>") and address; with holding, only those the specs declare
// services on (the record: where the project's services are after an
// apply, whatever -target left out of it).
func agentsOf(backends []plans.BackendInfo, holding bool) map[string]string {
	m := map[string]string{}
	for _, b := range backends {
		var sc scope
		if b.Kind != "consul" || holding && (json.Unmarshal(b.Scope, &sc) != nil || len(sc.IDs) == 0) {
			continue
		}
		m[b.Name] = b.Address
	}
	return m
}

// recorded reads the project's record; nil when there is none.
func (b *Backend) recorded(ctx context.Context, project string) (map[string]string, error) {
	var rec map[string]string
	err := b.net.Call(ctx, true, func(ctx context.Context) error {
		pair, _, err := b.client.KV().Get(RecordPrefix+project, (&api.QueryOptions{}).WithContext(ctx))
		if err != nil || pair == nil {
			return b.statusError(err)
		}
		return json.Unmarshal(pair.Value, &rec)
	})
	return rec, err
}

// Recorded reads the project's record, in one request: what a plan's
// Forgotten needs.
func (b *Backend) Recorded(ctx context.Context, project string) *plans.Record {
	rec, err := b.recorded(ctx, project)
	if err != nil {
		_, refused := adapter.Refused(err)
		return &plans.Record{Error: err.Error(), Refused: refused}
	}
	return &plans.Record{Agents: rec}
}

// Forgotten warns about each agent of the record that the plan does not
// read (its block is gone, or its address changed): the services of the
// project there are neither planned nor pruned.
func (b *Backend) Forgotten(r *plans.Record, project string, backends []plans.BackendInfo) hcl.Diagnostics {
	if r == nil {
		return nil
	}
	if r.Error != "" {
		summary := "Cannot read the record of the project's agents"
		if r.Refused {
			summary = "No permission to read the record of the project's agents"
		}
		return hcl.Diagnostics{{Severity: hcl.DiagWarning, Summary: summary,
			Detail: fmt.Sprintf("Reading %s%s from %s: %s. A removed agent block is not noticed.", RecordPrefix, project, b.address(), r.Error), Subject: b.where.Ptr()}}
	}
	rec := r.Agents
	now := agentsOf(backends, false)
	var diags hcl.Diagnostics
	for _, name := range slices.Sorted(maps.Keys(rec)) {
		if now[name] == rec[name] {
			continue
		}
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagWarning,
			Summary:  "Services on an agent this plan does not read",
			Detail: fmt.Sprintf("At the last apply, project %s had its services on %s at %s, which the specs no longer declare at that address. "+
				"An agent's services can only be read and deregistered through that agent, so whatever the project registered there is neither planned nor pruned, and the next apply forgets it. "+
				"To prune them, declare the agent again (an agent block with that address, no service naming it) and apply; if the node is gone, its services went with it.",
				project, name, rec[name]),
			Subject: b.where.Ptr(),
		})
	}
	return diags
}

// Remember records the agents the project's services are on after a
// complete apply of the plan (none after a destroy), writing only when the
// record changed: a converged apply writes nothing.
func (b *Backend) Remember(ctx context.Context, project string, backends []plans.BackendInfo) error {
	now := agentsOf(backends, true)
	rec, err := b.recorded(ctx, project)
	if err != nil || maps.Equal(rec, now) {
		return err
	}
	key := RecordPrefix + project
	return b.net.Call(adapter.Sending(ctx), true, func(ctx context.Context) error {
		q := (&api.WriteOptions{}).WithContext(ctx)
		if len(now) == 0 {
			_, err := b.client.KV().Delete(key, q)
			return b.statusError(err)
		}
		value, _ := json.Marshal(now)
		_, err := b.client.KV().Put(&api.KVPair{Key: key, Value: value}, q)
		return b.statusError(err)
	})
}
