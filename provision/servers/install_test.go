package servers

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestInstallSideBySide: two runs of .ci/install-servers at once (make demo
// and make test started together) on a cache that lacks one server
// (Consul, built from the Go module proxy, quick once Go's build cache
// holds it; the others linked from the cache make test filled) both
// finish, and the server is there, whole, with no temporary file beside
// it. Before the lock, both built into one temporary file, and one
// failed: "mv: cannot stat '.../consul.tmp'".
func TestInstallSideBySide(t *testing.T) {
	home := CacheDir()
	cache := t.TempDir()
	for _, dir := range []string{"elasticsearch-2.4.1", "traefik-2.11.10", "traefik3-3.6.0", "traefik1-1.7.34"} {
		if _, err := os.Stat(filepath.Join(home, dir)); err != nil {
			t.Fatalf("%s is not in %s: run .ci/install-servers (make servers) first", dir, home)
		}
		if err := os.Symlink(filepath.Join(home, dir), filepath.Join(cache, dir)); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	outs, errs := make([][]byte, 2), make([]error, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command("bash", "../../.ci/install-servers")
			cmd.Env = append(os.Environ(), "PROVISION_CACHE="+cache)
			outs[i], errs[i] = cmd.CombinedOutput()
		}()
	}
	wg.Wait()
	builds := 0
	for i := range 2 {
		if errs[i] != nil {
			t.Errorf("run %d: %v\n%s", i, errs[i], outs[i])
		}
		if strings.Contains(string(outs[i]), "consul 1.15.4: building") {
			builds++
		}
	}
	if builds != 1 {
		t.Errorf("%d runs built Consul into the same cache, want one (the other waits and finds it):\n%s\n%s", builds, outs[0], outs[1])
	}
	if out, err := exec.Command(filepath.Join(cache, "consul-1.15.4", "consul"), "version").CombinedOutput(); err != nil {
		t.Errorf("consul is not installed whole: %v\n%s", err, out)
	}
	left, _ := filepath.Glob(filepath.Join(cache, "consul-1.15.4", "*.tmp*"))
	if len(left) > 0 {
		t.Errorf("temporary folders left in the cache: %v", left)
	}
}
