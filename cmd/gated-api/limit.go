package main

import (
	"math"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// limiter bounds the wrong guesses of each client: a token bucket per
// client of burst tokens, refilled at rate a second. A refused token
// takes one; a client whose bucket is empty is answered 429 with
// Retry-After, its token not even compared, until one is back. An
// accepted token takes none, so that a proxy's forward auth of every
// request of a good client is never slowed.
type limiter struct {
	rate  float64 // tokens a second
	burst float64
	now   func() time.Time
	// trusted are the proxies whose X-Forwarded-For names the client.
	trusted []*net.IPNet

	mu      sync.Mutex
	buckets map[string]*bucket
}

type bucket struct {
	tokens float64
	at     time.Time
}

// maxClients bounds the buckets kept: past it, the full ones go.
const maxClients = 100_000

func newLimiter(rate float64, burst int, trusted []*net.IPNet) *limiter {
	return &limiter{rate: rate, burst: float64(burst), now: time.Now, trusted: trusted, buckets: map[string]*bucket{}}
}

// set changes the limits; a bucket fuller than the new burst is cut to it.
func (l *limiter) set(rate float64, burst int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.rate, l.burst = rate, float64(burst)
}

// client is who a request comes from: its peer, or, from a trusted
// proxy, the last address of X-Forwarded-For that the proxy added.
func (l *limiter) client(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	if ip := net.ParseIP(host); ip != nil && l.trusts(ip) {
		if xff := r.Header.Values("X-Forwarded-For"); len(xff) > 0 {
			parts := strings.Split(xff[len(xff)-1], ",")
			if c := strings.TrimSpace(parts[len(parts)-1]); net.ParseIP(c) != nil {
				return c
			}
		}
	}
	return host
}

func (l *limiter) trusts(ip net.IP) bool {
	for _, n := range l.trusted {
		if n.Contains(ip) {
			return true
		}
	}
	return false
}

// wait is how long the client must wait before its next guess; 0 when it
// may guess now.
func (l *limiter) wait(client string) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.refill(client)
	if b.tokens >= 1 {
		return 0
	}
	return time.Duration(math.Ceil((1 - b.tokens) / l.rate * float64(time.Second)))
}

// refused takes a token of the client's bucket.
func (l *limiter) refused(client string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.refill(client)
	b.tokens = max(b.tokens-1, 0)
	if len(l.buckets) > maxClients {
		for c := range l.buckets {
			if c != client && l.refill(c).tokens >= l.burst {
				delete(l.buckets, c)
			}
		}
	}
}

func (l *limiter) refill(client string) *bucket {
	now := l.now()
	b := l.buckets[client]
	if b == nil {
		b = &bucket{tokens: l.burst, at: now}
		l.buckets[client] = b
	}
	b.tokens = min(l.burst, b.tokens+now.Sub(b.at).Seconds()*l.rate)
	b.at = now
	return b
}

// parseCIDRs reads a comma-separated list of addresses and CIDRs.
func parseCIDRs(s string) ([]*net.IPNet, error) {
	var out []*net.IPNet
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if !strings.Contains(part, "/") {
			if ip := net.ParseIP(part); ip != nil && ip.To4() != nil {
				part += "/32"
			} else {
				part += "/128"
			}
		}
		_, n, err := net.ParseCIDR(part)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}
