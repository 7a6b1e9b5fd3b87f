package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/hashicorp/consul/api"
)

// minTokenBytes is the shortest token hash-token takes: a token is
// guessed, so it holds at least 32 bytes (openssl rand -hex 32 gives 64).
const minTokenBytes = 32

const usage = `Usage:
  gated-api [-listen ADDR] [-tokens FILE] [-limits-key KEY | -auth-burst N -auth-rate N]
  gated-api hash-token [-identity NAME] [-token-env VAR]

Serves /api (token-gated), /auth (the proxy's forward-auth check) and /healthz.
Clients send their token in the X-Auth-Token header.

Tokens come from -tokens FILE, or else from the environment variable
GATED_API_TOKENS; both hold entries "<identity> sha256:<hex>" (one a line in
the file; newlines or commas in the variable). Tokens are never stored in
clear: "gated-api hash-token" reads a token from standard input (or from the
variable named by -token-env) and prints its entry.

Wrong tokens are bounded per client by -auth-burst and -auth-rate, or by
the Consul KV key -limits-key names ({"rate": N, "burst": N}, the key
apps/<team>/limits the shipped specs write), read from the agent of
CONSUL_HTTP_ADDR (with CONSUL_HTTP_TOKEN and the CONSUL_* TLS settings)
at start and followed while it runs.

Options:
`

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "hash-token" {
		return hashToken(args[1:], stdin, stdout, stderr)
	}
	fs := flag.NewFlagSet("gated-api", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage); fs.PrintDefaults() }
	listen := fs.String("listen", "127.0.0.1:8080", "`address` to listen on")
	tokenFile := fs.String("tokens", "", "token `file` of \"<identity> sha256:<hex>\" lines")
	burst := fs.Int("auth-burst", defaultAuthBurst, "wrong tokens a client may send at once before it is answered 429")
	rate := fs.Float64("auth-rate", defaultAuthRate, "wrong tokens a `second` a client may send after its burst")
	trusted := fs.String("trusted-proxies", "127.0.0.1,::1", "proxies (`addresses or CIDRs`, comma-separated) whose X-Forwarded-For names the client")
	limitsKey := fs.String("limits-key", "", "Consul KV `key` of {\"rate\": N, \"burst\": N} that sets -auth-rate and -auth-burst, followed while running")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	proxies, err := parseCIDRs(*trusted)
	if err != nil || *burst < 1 || *rate <= 0 {
		fmt.Fprintf(stderr, "gated-api: -auth-burst must be at least 1, -auth-rate above 0 and -trusted-proxies addresses or CIDRs (%v)\n", err)
		return 2
	}
	if *limitsKey != "" && (isSet(fs, "auth-burst") || isSet(fs, "auth-rate")) {
		fmt.Fprintln(stderr, "gated-api: -limits-key sets the limits: give it or -auth-burst and -auth-rate, not both")
		return 2
	}
	tokens, err := loadTokens(*tokenFile, os.Getenv("GATED_API_TOKENS"))
	if err != nil {
		fmt.Fprintf(stderr, "gated-api: %v\n", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	lim := newLimiter(*rate, *burst, proxies)
	if *limitsKey != "" {
		client, err := api.NewClient(api.DefaultConfig())
		if err != nil {
			fmt.Fprintf(stderr, "gated-api: %v\n", err)
			return 1
		}
		l, index, err := readLimits(ctx, client.KV(), *limitsKey, 0)
		if err != nil {
			fmt.Fprintf(stderr, "gated-api: %v\n", err)
			return 1
		}
		lim.set(l.Rate, l.Burst)
		*burst, *rate = l.Burst, l.Rate
		go watchLimits(ctx, client.KV(), *limitsKey, index, lim, stderr)
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintf(stderr, "gated-api: %v\n", err)
		return 1
	}
	fmt.Fprintf(stderr, "gated-api: listening on http://%s with %d tokens; a client gets %v wrong tokens, then %v a second\n", ln.Addr(), len(tokens.entries), *burst, *rate)
	if err := serve(ctx, ln, newLimitedHandler(tokens, stderr, lim)); err != nil {
		fmt.Fprintf(stderr, "gated-api: %v\n", err)
		return 1
	}
	return 0
}

// serve serves h on ln until ctx ends, then shuts down gracefully.
func serve(ctx context.Context, ln net.Listener, h http.Handler) error {
	srv := newServer(h)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		return err
	}
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// loadTokens reads the token file, or else the environment's entries.
func loadTokens(file, env string) (*tokenSet, error) {
	var ts *tokenSet
	var err error
	switch {
	case file != "":
		f, ferr := os.Open(file)
		if ferr != nil {
			return nil, ferr
		}
		defer f.Close()
		ts, err = parseTokens(f, file)
	default:
		ts, err = parseTokens(strings.NewReader(strings.ReplaceAll(env, ",", "\n")), "GATED_API_TOKENS")
	}
	if err != nil {
		return nil, err
	}
	if len(ts.entries) == 0 {
		return nil, fmt.Errorf("no tokens: give -tokens FILE or GATED_API_TOKENS (entries from \"gated-api hash-token\")")
	}
	return ts, nil
}

func hashToken(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("gated-api hash-token", flag.ContinueOnError)
	fs.SetOutput(stderr)
	identity := fs.String("identity", "user", "identity `name` the token stands for")
	tokenEnv := fs.String("token-env", "", "read the token from this environment `variable` instead of standard input")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	var token string
	if *tokenEnv != "" {
		token = os.Getenv(*tokenEnv)
	} else {
		line, _ := bufio.NewReader(stdin).ReadString('\n')
		token = strings.TrimSpace(line)
	}
	if len(token) < minTokenBytes || strings.ContainsAny(*identity, " \t\n") || *identity == "" {
		fmt.Fprintf(stderr, "gated-api hash-token: need a token of at least %d bytes (openssl rand -hex 32 makes one) and an identity without spaces\n", minTokenBytes)
		return 1
	}
	fmt.Fprintln(stdout, hashLine(*identity, token))
	return 0
}

// isSet reports whether the command line gave the flag.
func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
