package servers

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The Traefik generations the end-to-end test runs; the demo runs
// Traefik 2.
const (
	Traefik1Version = "1.7.34"
	TraefikVersion  = "2.11.10"
	Traefik3Version = "3.6.0"
)

// TraefikReadRules are the Consul ACL rules a Traefik consul-catalog
// provider needs to read the catalog: every service, and every node (the
// health checks are dropped without node read).
const TraefikReadRules = "service_prefix \"\" {\n  policy = \"read\"\n}\n\nnode_prefix \"\" {\n  policy = \"read\"\n}\n"

// TraefikOptions choose the Traefik to start.
type TraefikOptions struct {
	// Generation is 1, 2 (the default) or 3.
	Generation int
	// ExposedByDefault is the Consul catalog provider's setting: true is
	// Traefik's own default, under which a service tagged with nothing but
	// traefik.enable=true, or nothing at all, gets a default Host router.
	ExposedByDefault bool
	// Token is the Consul ACL token the catalog provider reads with; empty
	// for an agent without ACLs.
	Token string
	// FileOnly (Traefik 1 only) is the path of a file provider's TOML
	// configuration, served instead of the Consul catalog: a proxy that
	// does not read what provision registers.
	FileOnly string
	// ServeWarning (Traefik 1 only) serves a service whose checks warn, as
	// Traefik 2 and 3 do by default: --consulcatalog.strictChecks=false
	// (Traefik 1.7 serves passing services only unless told so).
	ServeWarning bool
}

// TraefikBinary is the installed Traefik of a generation (1, 2 or 3).
func TraefikBinary(generation int) (string, error) {
	switch generation {
	case 1:
		return installed(filepath.Join(CacheDir(), "traefik1-"+Traefik1Version, "traefik"))
	case 3:
		return installed(filepath.Join(CacheDir(), "traefik3-"+Traefik3Version, "traefik3"))
	}
	return installed(filepath.Join(CacheDir(), "traefik-"+TraefikVersion, "traefik"))
}

// Traefik is a reverse proxy whose routes come from a Consul catalog.
type Traefik struct {
	URL string // the "web" entrypoint, http://127.0.0.1:PORT
	// API is the proxy's API (api.insecure on the "traefik" entrypoint),
	// http://127.0.0.1:PORT.
	API  string
	proc *process
}

// StartTraefik starts Traefik with the Consul catalog provider, refreshed
// every second (Traefik 1 watches the catalog, with no throttle), and its
// API on an entrypoint of its own.
func StartTraefik(ctx context.Context, consulAddr string, opts TraefikOptions, logw io.Writer) (*Traefik, error) {
	bin, err := TraefikBinary(opts.Generation)
	if err != nil {
		return nil, err
	}
	ports, err := FreePorts(2)
	if err != nil {
		return nil, err
	}
	var env []string
	args := []string{
		"--entrypoints.web.address=127.0.0.1:" + strconv.Itoa(ports[0]),
		"--entrypoints.traefik.address=127.0.0.1:" + strconv.Itoa(ports[1]),
		"--api.insecure=true",
		"--providers.consulcatalog=true",
		"--providers.consulcatalog.endpoint.address=" + consulAddr,
		"--providers.consulcatalog.exposedByDefault=" + strconv.FormatBool(opts.ExposedByDefault),
		"--providers.consulcatalog.refreshInterval=1s",
		"--log.level=INFO",
	}
	if opts.Token != "" {
		args = append(args, "--providers.consulcatalog.endpoint.token="+opts.Token)
	}
	if opts.Generation == 1 {
		// Traefik 1.7's flags (docs.traefik.io/v1.7/configuration/backends/consulcatalog/); its catalog
		// client takes the token from Consul's own variable.
		args = []string{
			"--checknewversion=false", "--loglevel=INFO",
			"--consulcatalog", "--consulcatalog.endpoint=" + consulAddr,
			"--consulcatalog.exposedbydefault=" + strconv.FormatBool(opts.ExposedByDefault),
			"--entrypoints=Name:web Address:127.0.0.1:" + strconv.Itoa(ports[0]),
			"--entrypoints=Name:traefik Address:127.0.0.1:" + strconv.Itoa(ports[1]),
			"--defaultentrypoints=web", "--api", "--api.entrypoint=traefik", "--providersthrottleduration=0s",
		}
		if opts.Token != "" {
			env = []string{"CONSUL_HTTP_TOKEN=" + opts.Token}
		}
		if opts.ServeWarning {
			args = append(args, "--consulcatalog.strictChecks=false")
		}
		if opts.FileOnly != "" {
			args = append(slices.DeleteFunc(args, func(a string) bool { return strings.HasPrefix(a, "--consulcatalog") }),
				"--file", "--file.filename="+opts.FileOnly)
		}
	}
	p, err := startProcessEnv(bin, args, env, logw)
	if err != nil {
		return nil, err
	}
	tr := &Traefik{URL: "http://127.0.0.1:" + strconv.Itoa(ports[0]), API: "http://127.0.0.1:" + strconv.Itoa(ports[1]), proc: p}
	// Ready once its API answers: Traefik listens on the entrypoint a
	// moment before it routes /api there (a 404 meanwhile), and a plan
	// made then warns that it cannot read the proxy (make demo did).
	if err := waitFor(ctx, 30*time.Second, func() bool {
		resp, err := http.Get(tr.API + "/api/version")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}); err != nil {
		tr.Stop()
		return nil, fmt.Errorf("traefik did not listen: %w", err)
	}
	return tr, nil
}

// Stop stops Traefik.
func (t *Traefik) Stop() error { return t.proc.stop() }

// NewTraefik starts Traefik for a test and stops it when the test ends.
func NewTraefik(t testing.TB, consulAddr string, opts TraefikOptions) *Traefik {
	t.Helper()
	return forTest(t, "traefik", func(log io.Writer) (*Traefik, error) {
		return StartTraefik(context.Background(), consulAddr, opts, log)
	})
}
