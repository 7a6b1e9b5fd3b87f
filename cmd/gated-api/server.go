package main

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Limits of the server: no body is needed, headers are small.
const (
	maxHeaderBytes = 16 << 10
	maxBodyBytes   = 1 << 20
)

// newHandler serves /api, /auth and /healthz, logging one line per
// request to log: method, path, status, duration and identity, never the
// token.
func newHandler(tokens *tokenSet, log io.Writer) http.Handler {
	mux := http.NewServeMux()
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
		fmt.Fprintf(log, "%s %s %s %d %s %s\n", start.UTC().Format(time.RFC3339), r.Method, r.URL.Path, rec.status, time.Since(start).Round(time.Microsecond), identity)
		mu.Unlock()
	})
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
