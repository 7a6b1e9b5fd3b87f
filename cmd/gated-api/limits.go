package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/hashicorp/consul/api"
)

// limits are the bounds of a client's wrong tokens as the team's specs
// write them to Consul KV (the key "limits" of the shipped gated-api
// module, apps/<team>/limits): {"rate": N, "burst": N}.
type limits struct {
	Rate  float64 `json:"rate"`
	Burst int     `json:"burst"`
}

// readLimits reads key from kv, waiting while its index is still index
// (a blocking query, https://developer.hashicorp.com/consul/api-docs/features/blocking;
// 0 answers at once). It returns the key's new index.
func readLimits(ctx context.Context, kv *api.KV, key string, index uint64) (limits, uint64, error) {
	pair, meta, err := kv.Get(key, (&api.QueryOptions{WaitIndex: index, WaitTime: 5 * time.Minute}).WithContext(ctx))
	if err != nil {
		return limits{}, index, err
	}
	if pair == nil {
		return limits{}, meta.LastIndex, fmt.Errorf("the limits key %q does not exist on the agent", key)
	}
	var l limits
	if err := json.Unmarshal(pair.Value, &l); err != nil {
		return limits{}, meta.LastIndex, fmt.Errorf("the limits key %q is not {\"rate\": N, \"burst\": N}: %v", key, err)
	}
	if l.Rate <= 0 || l.Burst < 1 {
		return limits{}, meta.LastIndex, fmt.Errorf("the limits key %q has rate %v and burst %d: the rate must be above 0 and the burst at least 1", key, l.Rate, l.Burst)
	}
	return l, meta.LastIndex, nil
}

// watchLimits keeps lim at what key holds until ctx ends: an edit of the
// key (an apply of the specs) takes effect without a restart. A read that
// fails, or a key deleted or made invalid, keeps the limits in force and
// is logged; the next read waits a little.
func watchLimits(ctx context.Context, kv *api.KV, key string, index uint64, lim *limiter, log io.Writer) {
	for ctx.Err() == nil {
		l, next, err := readLimits(ctx, kv, key, index)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			fmt.Fprintf(log, "gated-api: %v; the limits in force stay\n", err)
			select {
			case <-ctx.Done():
			case <-time.After(5 * time.Second):
			}
		case next != index:
			lim.set(l.Rate, l.Burst)
			fmt.Fprintf(log, "gated-api: limits from %q: a burst of %d wrong tokens, then %v a second\n", key, l.Burst, l.Rate)
		}
		if next < index {
			next = 0 // the index went back (a restored snapshot): read again at once
		}
		index = next
	}
}
