package servers

import (
	"bytes"
	"io"
	"sync"
	"testing"
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
	var log LogBuffer
	s, err := start(&log)
	if err != nil {
		t.Fatalf("starting %s: %v\n%s", name, err, log.Tail(4000))
	}
	t.Cleanup(func() {
		s.Stop()
		if t.Failed() {
			t.Logf("%s log:\n%s", name, log.Tail(4000))
		}
	})
	return s
}
