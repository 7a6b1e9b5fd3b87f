package servers

import (
	"bytes"
	"sync"
)

// LogBuffer collects a server's output, written from several goroutines.
type LogBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *LogBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
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
