package watch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/consul/api"
	"github.com/provision-dev/provision/schema"
)

// Agents are the addresses of the Consul agents the specs write to: each
// agent block's, else the consul block's, else CONSUL_HTTP_ADDR's ("" for
// the client's own default).
func Agents(cfg *schema.Config, getenv func(string) string) []string {
	var out []string
	for _, a := range cfg.Agents {
		out = append(out, a.Address)
	}
	if len(out) > 0 {
		return out
	}
	if cfg.Consul != nil && cfg.Consul.Address != "" {
		return []string{cfg.Consul.Address}
	}
	if len(cfg.Services) == 0 {
		return nil
	}
	return []string{getenv("CONSUL_HTTP_ADDR")}
}

// Client is a Consul API client of the agent at addr, with the rest of
// its settings (token, TLS) from Consul's own environment variables.
func Client(addr string) (*api.Client, error) {
	c := api.DefaultConfig()
	if addr != "" {
		c.Address = addr
	}
	return api.NewClient(c)
}

// FollowAgent wakes w each time the services of the agent's node change,
// through a blocking query of the catalog (GET
// /v1/catalog/node-services/<node>?index=...&wait=...; the agent's own
// /v1/agent/services has no content hash on Consul 1.15, so it cannot
// block): a change is seen as it happens, and an idle agent costs one
// open request. An agent that goes away (restarted, its registrations
// lost) is asked again with backoff, and its return is a change.
func (w *Watcher) FollowAgent(ctx context.Context, addr string) {
	c, err := Client(addr)
	if err != nil {
		w.log("error", "feed", "", "the Consul agent %s cannot be followed: %s", addr, err)
		return
	}
	var index uint64
	node, backoff, down := "", 250*time.Millisecond, false
	for ctx.Err() == nil {
		var err error
		if node == "" {
			node, err = c.Agent().NodeName()
		}
		var meta *api.QueryMeta
		if err == nil {
			_, meta, err = c.Catalog().NodeServiceList(node, (&api.QueryOptions{WaitIndex: index, WaitTime: 5 * time.Minute}).WithContext(ctx))
		}
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			if !down {
				w.log("warn", "feed", "", "the Consul agent %s does not answer (%s); asking again with backoff", addr, err)
				down = true
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, 5*time.Second)
			node, index = "", 0
			continue
		}
		backoff = 250 * time.Millisecond
		if down {
			down = false
			w.log("info", "feed", "", "the Consul agent %s answers again", addr)
			w.agentBack()
			w.Wake("agent " + addr + " is back")
		}
		switch {
		case meta.LastIndex < index:
			index = 0 // the index went back (a restarted server): start over
			w.Wake("agent " + addr + " services changed")
		case meta.LastIndex > index:
			if index != 0 {
				w.Wake("agent " + addr + " services changed")
			}
			index = meta.LastIndex
		}
	}
}

// SlowPoll multiplies the interval when the specs declare no search
// cluster and no proxy: the agents' blocking queries see every change of
// a registration, and only a health check edited by hand (which they do
// not carry) waits for the poll.
const SlowPoll = 10

// Poll wakes w every interval (with jitter): the search clusters and the
// proxies have no change feed. Specs with neither are polled SlowPoll
// times less often.
func (w *Watcher) Poll(ctx context.Context) {
	for {
		every := w.o.Interval
		if cfg := w.config(); len(cfg.Searches)+len(cfg.Traefiks) == 0 && len(cfg.Services) > 0 {
			every *= SlowPoll
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(Jitter(every)):
			w.Wake("poll")
		}
	}
}

// FollowSpecs reloads the specs, and wakes w, when the files under the
// specs' directory change (their names, sizes or times, looked at every
// second): once per change, not once per event of an editor.
func (w *Watcher) FollowSpecs(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
		w.mu.Lock()
		last := w.files
		w.mu.Unlock()
		if snapshot(w.o.Base.Dir) != last && w.Reload() {
			w.Wake("the specs changed")
		}
	}
}

// snapshot is the names, sizes and times of the spec files.
func snapshot(dir string) string {
	files, _ := schema.SpecFiles(dir)
	sort.Strings(files)
	var b strings.Builder
	for _, f := range files {
		if st, err := os.Stat(f); err == nil {
			fmt.Fprintf(&b, "%s %d %d\n", filepath.Base(f), st.Size(), st.ModTime().UnixNano())
		}
	}
	return b.String()
}
