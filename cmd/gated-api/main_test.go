package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// testToken is a fake token; only its hash is ever written anywhere.
const testToken = "test-token-alice-0123456789abcdef0123456789"

func testTokens(t *testing.T) *tokenSet {
	t.Helper()
	ts, err := parseTokens(strings.NewReader("# test tokens\n"+hashLine("alice", testToken)+"\n"), "test")
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

func TestEndpoints(t *testing.T) {
	var log bytes.Buffer
	h := newHandler(testTokens(t), &log)
	tests := []struct {
		name, path, token, clientUser string
		status                        int
		body, authUser                string
	}{
		{"api without a token", "/api", "", "", 401, "missing token\n", ""},
		{"api with an empty token", "/api", " ", "", 401, "missing token\n", ""},
		{"api with a wrong token", "/api", "nope", "", 401, "invalid token\n", ""},
		{"api with the right token", "/api", testToken, "", 200, "Hello, you are authenticated as alice.\n", ""},
		{"api ignores a client-sent X-Auth-User", "/api", testToken, "mallory", 200, "Hello, you are authenticated as alice.\n", ""},
		{"api ignores X-Auth-User without a token", "/api", "", "alice", 401, "missing token\n", ""},
		{"auth without a token", "/auth", "", "", 401, "missing token\n", ""},
		{"auth with a wrong token", "/auth", testToken + "x", "", 401, "invalid token\n", ""},
		{"auth with the right token", "/auth", testToken, "", 200, "ok\n", "alice"},
		{"healthz", "/healthz", "", "", 200, "ok\n", ""},
		{"anything else", "/admin", testToken, "", 404, "404 page not found\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest("GET", tt.path, nil)
			if tt.token != "" {
				req.Header.Set("X-Auth-Token", tt.token)
			}
			if tt.clientUser != "" {
				req.Header.Set("X-Auth-User", tt.clientUser)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tt.status || rec.Body.String() != tt.body || rec.Header().Get("X-Auth-User") != tt.authUser {
				t.Errorf("got %d %q X-Auth-User=%q, want %d %q %q", rec.Code, rec.Body.String(), rec.Header().Get("X-Auth-User"), tt.status, tt.body, tt.authUser)
			}
		})
	}
	if strings.Contains(log.String(), testToken) || strings.Contains(log.String(), "nope") {
		t.Errorf("the access log holds a token:\n%s", log.String())
	}
	if !strings.Contains(log.String(), "GET /api 200 ") || !strings.Contains(log.String(), " alice\n") {
		t.Errorf("the access log lacks the request lines:\n%s", log.String())
	}
}

func TestTokenFile(t *testing.T) {
	_, err := parseTokens(strings.NewReader("alice sha256:00\n"), "tokens.txt")
	if err == nil || !strings.HasPrefix(err.Error(), "tokens.txt:1: ") {
		t.Errorf("a malformed line: %v", err)
	}
	if _, err := loadTokens("", ""); err == nil {
		t.Error("no tokens at all must be refused")
	}
	ts, err := loadTokens("", hashLine("alice", testToken)+","+hashLine("bob", "test-token-bob"))
	if err != nil {
		t.Fatal(err)
	}
	if id, ok := ts.lookup("test-token-bob"); !ok || id != "bob" {
		t.Errorf("GATED_API_TOKENS: lookup = %q %v", id, ok)
	}
}

func TestHashToken(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"hash-token", "-identity", "alice"}, strings.NewReader(testToken+"\n"), &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if got := strings.TrimSpace(out.String()); got != hashLine("alice", testToken) || strings.Contains(got, testToken) {
		t.Errorf("hash-token printed %q", got)
	}
	if code := run([]string{"-help"}, nil, io.Discard, &errOut); code != 0 || !strings.Contains(errOut.String(), "Usage:") {
		t.Errorf("-help: exit %d", code)
	}
}

// TestServe runs the real server on a loopback port and shuts it down.
func TestServe(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- serve(ctx, ln, newHandler(testTokens(t), io.Discard)) }()
	req, _ := http.NewRequest("GET", "http://"+ln.Addr().String()+"/api", nil)
	req.Header.Set("X-Auth-Token", testToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("status %d", resp.StatusCode)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("shutdown: %v", err)
	}
}
