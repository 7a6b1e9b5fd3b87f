package watch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/provision-dev/provision/schema"
)

// SlowPoll multiplies the interval when change feeds see every change of
// the specs' objects (no search cluster, no proxy): the agents' blocking
// queries see every change of a registration, and only a health check
// edited by hand (which they do not carry) waits for the poll.
const SlowPoll = 10

// Poll wakes w every interval (with jitter): the search clusters and the
// proxies have no change feed. Specs with none of them are polled
// SlowPoll times less often.
func (w *Watcher) Poll(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(Jitter(w.PollEvery())):
			w.Wake("poll")
		}
	}
}

// PollEvery is how often the specs in force are polled: the interval, or
// SlowPoll times it for specs whose every change a change feed sees
// (schema.Config.Followed: only the agents' and the KV store's have one).
func (w *Watcher) PollEvery() time.Duration {
	if cfg := w.config(); cfg != nil && cfg.Followed() {
		return w.o.Interval * SlowPoll
	}
	return w.o.Interval
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
