package servers

import (
	"errors"
	"io"
	"testing"
)

// TestRetryBind: an agent that could not bind a port is started again,
// with new ports, at most three times; any other failure is final.
func TestRetryBind(t *testing.T) {
	for _, tt := range []struct {
		name      string
		bindFails int
		want      int // attempts
		ok        bool
	}{
		{"binds at once", 0, 1, true},
		{"port taken once", 1, 2, true},
		{"port always taken", 5, 3, false},
	} {
		attempts := 0
		c, err := retryBind(io.Discard, func(attempt int, w io.Writer) (*Consul, error) {
			attempts++
			if attempt <= tt.bindFails {
				// Consul's words, then Elasticsearch's (Java's).
				words := []string{"listen tcp 127.0.0.1:41943: bind: address already in use", "java.net.BindException: Address already in use"}
				io.WriteString(w, words[attempt%2])
				return nil, errors.New("the agent exited")
			}
			return &Consul{Node: "n"}, nil
		})
		if attempts != tt.want || (err == nil) != tt.ok || (c != nil) != tt.ok {
			t.Errorf("%s: %d attempts, %v, %v; want %d attempts, ok %t", tt.name, attempts, c, err, tt.want, tt.ok)
		}
	}
	attempts := 0
	if _, err := retryBind(io.Discard, func(int, io.Writer) (*Consul, error) {
		attempts++
		return nil, errors.New("no leader")
	}); err == nil || attempts != 1 {
		t.Errorf("another failure: %d attempts, %v", attempts, err)
	}
}
