package main

import (
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
)

// Limits of the server: no body is needed, headers are small.
const (
	maxHeaderBytes = 16 << 10
	maxBodyBytes   = 1 << 20
)

// Defaults of the wrong guesses a client may make (limiter): a burst of
// 100, then 10 a second.
const (
	defaultAuthBurst = 100
	defaultAuthRate  = 10
)

// newHandler is newLimitedHandler with the default limits, trusting the
// X-Forwarded-For of a proxy on loopback.
func newHandler(tokens *tokenSet, log io.Writer) http.Handler {
	trusted, _ := parseCIDRs("127.0.0.1,::1")
	return newLimitedHandler(tokens, log, newLimiter(defaultAuthRate, defaultAuthBurst, trusted))
}

// newLimitedHandler serves /api, /auth and /healthz, logging one line
// per request to log: method, path (its control characters escaped),
// status, duration and identity, never the token. A client's wrong
// tokens are bounded by lim.
func newLimitedHandler(tokens *tokenSet, log io.Writer, lim *limiter) http.Handler {
	mux := http.NewServeMux()
	authenticate := func(w http.ResponseWriter, r *http.Request, tokens *tokenSet) (string, bool) {
		client := lim.client(r)
		if wait := lim.wait(client); wait > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(wait.Seconds()))))
			http.Error(w, "too many wrong tokens: retry later", http.StatusTooManyRequests)
			return "", false
		}
		identity, ok := authenticate(w, r, tokens)
		if !ok && strings.TrimSpace(r.Header.Get("X-Auth-Token")) != "" {
			lim.refused(client)
		}
		return identity, ok
	}
	mux.HandleFunc("/auth", func(w http.ResponseWriter, r *http.Request) {
		identity, ok := authenticate(w, r, tokens)
		if !ok {
			return
		}
		w.Header().Set("X-Auth-User", identity)
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("/api", func(w http.ResponseWriter, r *http.Request) {
		identity, ok := authenticate(w, r, tokens)
		if !ok {
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintf(w, "Hello, you are authenticated as %s.\n", identity)
	})
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "ok")
	})
	var mu sync.Mutex
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		r.Body = http.MaxBytesReader(w, r.Body, maxBodyBytes)
		rec := &recorder{ResponseWriter: w, status: http.StatusOK}
		mux.ServeHTTP(rec, r)
		identity := rec.Header().Get("X-Auth-User")
		if identity == "" {
			identity = "-"
		}
		mu.Lock()
		fmt.Fprintf(log, "%s %s %s %d %s %s\n", start.UTC().Format(time.RFC3339), escaped(r.Method), escaped(r.URL.Path), rec.status, time.Since(start).Round(time.Microsecond), identity)
		mu.Unlock()
	})
}

// escaped is s for one line of the log: a control character (a %0A
// decoded into the path) as \xNN, a backslash doubled, so that no request
// writes a line of its own.
func escaped(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return r == '\\' || unicode.IsControl(r) }) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case unicode.IsControl(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// authenticate answers 401 unless X-Auth-Token holds an accepted token.
// The answer never repeats the token.
func authenticate(w http.ResponseWriter, r *http.Request, tokens *tokenSet) (string, bool) {
	token := strings.TrimSpace(r.Header.Get("X-Auth-Token"))
	identity, ok := tokens.lookup(token)
	if ok {
		return identity, true
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("WWW-Authenticate", `Token header="X-Auth-Token"`)
	w.WriteHeader(http.StatusUnauthorized)
	if token == "" {
		fmt.Fprintln(w, "missing token")
	} else {
		fmt.Fprintln(w, "invalid token")
	}
	return "", false
}

// recorder remembers the status a handler wrote.
type recorder struct {
	http.ResponseWriter
	status int
}

func (r *recorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

// newServer is the hardened server for a handler.
func newServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      10 * time.Second,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    maxHeaderBytes,
	}
}
