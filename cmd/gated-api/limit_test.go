package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestRateLimit: a burst of wrong tokens over the limit is answered 429
// with Retry-After, the right token too while the client waits, and after
// Retry-After the right token passes; another client is not held; a
// request without a token takes nothing.
func TestRateLimit(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	lim := newLimiter(2, 5, nil)
	lim.now = func() time.Time { return now }
	h := newLimitedHandler(testTokens(t), &bytes.Buffer{}, lim)
	ask := func(from, token string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("GET", "/auth", nil)
		req.RemoteAddr = from + ":40000"
		if token != "" {
			req.Header.Set("X-Auth-Token", token)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	for range 20 {
		if rec := ask("192.0.2.1", ""); rec.Code != http.StatusUnauthorized {
			t.Fatalf("no token: %d, want 401 (a missing token is no guess)", rec.Code)
		}
	}
	var codes []int
	for range 7 {
		codes = append(codes, ask("192.0.2.1", "wrong-"+testToken).Code)
	}
	if want := []int{401, 401, 401, 401, 401, 429, 429}; !slices.Equal(codes, want) {
		t.Fatalf("a burst of 7 wrong tokens over a burst of 5: %v, want %v", codes, want)
	}
	rec := ask("192.0.2.1", testToken)
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "1" {
		t.Fatalf("the right token while held: %d Retry-After %q, want 429 and 1", rec.Code, rec.Header().Get("Retry-After"))
	}
	if rec := ask("192.0.2.2", testToken); rec.Code != http.StatusOK {
		t.Fatalf("another client: %d, want 200", rec.Code)
	}
	now = now.Add(time.Second)
	if rec := ask("192.0.2.1", testToken); rec.Code != http.StatusOK {
		t.Fatalf("the right token after Retry-After: %d, want 200", rec.Code)
	}
}

// TestRateLimitBehindProxy: behind a trusted proxy the client is the
// address the proxy adds to X-Forwarded-For; a client's own header from
// an untrusted peer does not change who it is.
func TestRateLimitBehindProxy(t *testing.T) {
	trusted, err := parseCIDRs("127.0.0.1,10.0.0.0/8")
	if err != nil {
		t.Fatal(err)
	}
	lim := newLimiter(1, 1, trusted)
	for _, tt := range []struct{ peer, xff, want string }{
		{"127.0.0.1:1", "198.51.100.7", "198.51.100.7"},
		{"10.1.2.3:1", "203.0.113.9, 198.51.100.8", "198.51.100.8"},
		{"192.0.2.5:1", "198.51.100.7", "192.0.2.5"},
		{"127.0.0.1:1", "", "127.0.0.1"},
	} {
		req := httptest.NewRequest("GET", "/auth", nil)
		req.RemoteAddr = tt.peer
		if tt.xff != "" {
			req.Header.Set("X-Forwarded-For", tt.xff)
		}
		if got := lim.client(req); got != tt.want {
			t.Errorf("peer %s, X-Forwarded-For %q: client %q, want %q", tt.peer, tt.xff, got, tt.want)
		}
	}
}

// TestLogEscaped: a path with %0A writes one line, its control
// characters escaped.
func TestLogEscaped(t *testing.T) {
	var log bytes.Buffer
	h := newHandler(testTokens(t), &log)
	req := httptest.NewRequest("GET", "/healthz%0A2026-01-01T00:00:00Z%20GET%20/api%20200%201ms%20admin", nil)
	h.ServeHTTP(httptest.NewRecorder(), req)
	if lines := strings.Count(log.String(), "\n"); lines != 1 || !strings.Contains(log.String(), `/healthz\x0a2026`) {
		t.Errorf("the log of a path with a newline, %d lines:\n%s", lines, log.String())
	}
}

// TestShortToken: hash-token refuses a token shorter than 32 bytes.
func TestShortToken(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"hash-token"}, strings.NewReader("x\n"), &out, &errOut); code != 1 || out.Len() != 0 || !strings.Contains(errOut.String(), "at least 32 bytes") {
		t.Errorf("a one-character token: exit %d, %q %q", code, out.String(), errOut.String())
	}
	if code := run([]string{"hash-token"}, strings.NewReader(strings.Repeat("a", 31)+"\n"), &out, &errOut); code != 1 {
		t.Errorf("a 31-byte token: exit %d", code)
	}
}
