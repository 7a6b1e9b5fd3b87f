package servers

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// TraefikVersion is the reverse proxy the end-to-end test and the demo run.
const TraefikVersion = "2.11.10"

// TraefikBinary is the installed Traefik.
func TraefikBinary() (string, error) {
	return installed(filepath.Join(CacheDir(), "traefik-"+TraefikVersion, "traefik"))
}

// Traefik is a reverse proxy whose routes come from a Consul catalog.
type Traefik struct {
	URL  string // the "web" entrypoint, http://127.0.0.1:PORT
	proc *process
}

// StartTraefik starts Traefik with the Consul catalog provider, exposing
// only services tagged traefik.enable=true, refreshed every second.
func StartTraefik(ctx context.Context, consulAddr string, logw io.Writer) (*Traefik, error) {
	bin, err := TraefikBinary()
	if err != nil {
		return nil, err
	}
	ports, err := FreePorts(1)
	if err != nil {
		return nil, err
	}
	p, err := startProcess(bin, []string{
		"--entrypoints.web.address=127.0.0.1:" + strconv.Itoa(ports[0]),
		"--providers.consulcatalog=true",
		"--providers.consulcatalog.endpoint.address=" + consulAddr,
		"--providers.consulcatalog.exposedByDefault=false",
		"--providers.consulcatalog.refreshInterval=1s",
		"--log.level=INFO",
	}, logw)
	if err != nil {
		return nil, err
	}
	tr := &Traefik{URL: "http://127.0.0.1:" + strconv.Itoa(ports[0]), proc: p}
	if err := waitFor(ctx, 30*time.Second, func() bool {
		resp, err := http.Get(tr.URL + "/")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil
	}); err != nil {
		tr.Stop()
		return nil, fmt.Errorf("traefik did not listen: %w", err)
	}
	return tr, nil
}

// Stop stops Traefik.
func (t *Traefik) Stop() error { return t.proc.stop() }

// NewTraefik starts Traefik for a test and stops it when the test ends.
func NewTraefik(t testing.TB, consulAddr string) *Traefik {
	t.Helper()
	return forTest(t, "traefik", func(log io.Writer) (*Traefik, error) { return StartTraefik(context.Background(), consulAddr, log) })
}
