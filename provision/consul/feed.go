package consul

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/hashicorp/consul/api"
	"github.com/provision-dev/provision/provision"
	"github.com/provision-dev/provision/provision/consul/client"
)

// Follow tells feed each time the services of the agent's node change,
// through a blocking query of the catalog (GET
// /v1/catalog/node-services/<node>?index=...&wait=...; the agent's own
// /v1/agent/services has no content hash on Consul 1.15, so it cannot
// block): a change is seen as it happens, and an idle agent costs one
// open request. An agent that goes away (restarted, its registrations
// lost) is asked again with backoff, and its return is a change.
//
// The catalog is the servers': during a leader election (or with no
// quorum) it cannot answer, while the agent itself still does. Then the
// agent's own services are read once a second until the catalog answers
// again, so that drift on the agent is seen meanwhile; the catalog's
// return is a change too (a repair needs a leader for the lock).
func (b *Backend) Follow(ctx context.Context, feed provision.Feed) {
	what := "the Consul agent " + b.c.Address()
	node := ""
	agent := &client.Fallback{What: "watching the agent's own services (GET /v1/agent/services) until the catalog answers", Poll: func(ctx context.Context) (string, error) {
		ctx, cancel := context.WithTimeout(ctx, b.c.Net.Request)
		defer cancel()
		services, err := b.c.API.Agent().ServicesWithFilterOpts("", (&api.QueryOptions{}).WithContext(ctx))
		if err != nil {
			return "", err
		}
		raw, _ := json.Marshal(services)
		sum := sha256.Sum256(raw)
		return hex.EncodeToString(sum[:]), nil
	}}
	client.Follow(ctx, feed, what, what+" services changed", agent, func(ctx context.Context, index uint64) (uint64, error) {
		var err error
		if node == "" {
			if node, err = b.c.API.Agent().NodeName(); err != nil {
				return 0, err
			}
		}
		_, meta, err := b.c.API.Catalog().NodeServiceList(node, (&api.QueryOptions{WaitIndex: index, WaitTime: 5 * time.Minute}).WithContext(ctx))
		if err != nil {
			node = ""
			return 0, b.c.StatusError(err)
		}
		return meta.LastIndex, nil
	})
}
