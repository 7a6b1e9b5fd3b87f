package client

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sync/atomic"

	"github.com/hashicorp/consul/api"
	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision/adapter"
)

// earlyRead is the answer of a GET begun before the specs were loaded.
type earlyRead struct {
	done   chan struct{} // closed once the answer is in
	taken  atomic.Bool
	header http.Header
	body   []byte
	err    error
}

// earlyKey is what an early answer is for: one agent (its base URL), one
// token, one path.
type earlyKey struct{ base, token, path string }

type earlyCtx struct{}

// ReadEarly begins GET of each path on the agent of Consul's environment
// (CONSUL_HTTP_ADDR, CONSUL_HTTP_TOKEN and the rest, as an agent the specs
// do not configure is opened), and returns ctx carrying the answers. A
// large spec takes most of a plan's time to load and decode, and the
// agent answers meanwhile.
//
// Get under the returned context takes an answer when it asks the same
// agent, with the same token, for the same path, once; an answer that
// failed is asked for again there, with the run's deadlines and retries.
// The answer is as old as the load: only for runs that take no lock.
func ReadEarly(ctx context.Context, paths ...string) context.Context {
	a, err := Open(api.DefaultConfig(), adapter.Deadlines{}, "", hcl.Range{})
	if err != nil {
		return ctx
	}
	reads := map[earlyKey]*earlyRead{}
	for _, p := range paths {
		r := &earlyRead{done: make(chan struct{})}
		reads[earlyKey{a.Address(), a.Conf.Token, p}] = r
		go func() {
			defer close(r.done)
			var resp *http.Response
			if resp, r.err = a.get(ctx, p); r.err == nil {
				r.header = resp.Header
				r.body, r.err = io.ReadAll(resp.Body)
				resp.Body.Close()
			}
		}()
	}
	return context.WithValue(ctx, earlyCtx{}, reads)
}

// early takes the answer ReadEarly began for path on a, if ctx carries
// one not taken yet, and waits for it; false when there is none, or it
// failed.
func (a *Agent) early(ctx context.Context, path string) (*earlyRead, bool) {
	reads, _ := ctx.Value(earlyCtx{}).(map[earlyKey]*earlyRead)
	r, ok := reads[earlyKey{a.Address(), a.Conf.Token, path}]
	if !ok || r.taken.Swap(true) {
		return nil, false
	}
	select {
	case <-r.done:
		return r, r.err == nil
	case <-ctx.Done():
		return nil, false
	}
}

// decode is an early answer's headers, its body decoded into out.
func (r *earlyRead) decode(out any) (http.Header, error) {
	return r.header, json.Unmarshal(r.body, out)
}
