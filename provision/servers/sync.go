package servers

import (
	"bytes"
	"io"
	"sync"
	"testing"

	"github.com/provision-dev/provision/provision/parallel"
)

// LogBuffer collects the end of a server's output, written from several
// goroutines: at most logKeep bytes, so that a server logging every
// request for a long run (a bench of 10,000 services) does not fill the
// memory of the process that started it.
type LogBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

const logKeep = 1 << 20

func (l *LogBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.buf.Len()+len(p) > 2*logKeep {
		rest := l.buf.Bytes()[max(0, l.buf.Len()-logKeep):]
		kept := append([]byte(nil), rest...)
		l.buf.Reset()
		l.buf.Write(kept)
	}
	return l.buf.Write(p)
}

// Tail is the last n bytes of the output.
func (l *LogBuffer) Tail(n int) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.buf.String()
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// forTest starts a server for a test, fails the test (never skips it) when
// it cannot, stops it when the test ends, and shows its log on failure.
func forTest[S interface{ Stop() error }](t testing.TB, name string, start func(io.Writer) (S, error)) S {
	t.Helper()
	return allForTest(t, []string{name}, func(_ int, w io.Writer) (S, error) { return start(w) })[0]
}

// allForTest starts the servers named, side by side (at most 8 at a
// time), as forTest does each: the test fails when one cannot start, and
// every one that did is stopped when it ends, all at once.
func allForTest[S interface{ Stop() error }](t testing.TB, names []string, start func(int, io.Writer) (S, error)) []S {
	t.Helper()
	out := make([]S, len(names))
	errs := make([]error, len(names))
	logs := make([]*LogBuffer, len(names))
	parallel.Do(len(names), 8, func(i int) {
		logs[i] = &LogBuffer{}
		out[i], errs[i] = start(i, logs[i])
	})
	// They are stopped side by side too: a Consul client agent leaves its
	// cluster gracefully on SIGTERM, which takes seconds each.
	t.Cleanup(func() {
		parallel.Do(len(names), len(names), func(i int) {
			if errs[i] == nil {
				out[i].Stop()
			}
		})
		for i, name := range names {
			if errs[i] == nil && t.Failed() {
				t.Logf("%s log:\n%s", name, logs[i].Tail(4000))
			}
		}
	})
	for i, name := range names {
		if errs[i] != nil {
			t.Fatalf("starting %s: %v\n%s", name, errs[i], logs[i].Tail(4000))
		}
	}
	return out
}
