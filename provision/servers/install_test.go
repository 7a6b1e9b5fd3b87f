package servers

import (
	"errors"
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

// TestInstallSaysWhatFailed: a server that cannot be built (here: no
// module proxy, an empty module cache) fails the install with exit 1,
// naming it and quoting the end of its build's log, and leaves nothing
// in the cache where a later run would take it for a server; a server
// the script does not know is refused before anything is built.
func TestInstallSaysWhatFailed(t *testing.T) {
	cache := t.TempDir()
	cmd := exec.Command("bash", "../../.ci/install-servers", "consul")
	cmd.Env = append(os.Environ(), "PROVISION_CACHE="+cache, "GOPROXY=off", "GOMODCACHE="+t.TempDir(), "GOFLAGS=-modcacherw")
	out, err := cmd.CombinedOutput()
	if code := exitCode(err); code != 1 {
		t.Fatalf("exit %d, want 1:\n%s", code, out)
	}
	for _, want := range []string{"consul 1.15.4: building github.com/hashicorp/consul", "consul: failed; the end of " + filepath.Join(cache, "logs", "consul.log"), "GOPROXY=off", "install-servers: failed: consul"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the output lacks %q:\n%s", want, out)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(cache, "consul-1.15.4", "*")); len(left) > 0 {
		t.Errorf("a failed build left %v in the cache", left)
	}

	cmd = exec.Command("bash", "../../.ci/install-servers", "consul", "nomad")
	cmd.Env = append(os.Environ(), "PROVISION_CACHE="+t.TempDir())
	out, err = cmd.CombinedOutput()
	if code := exitCode(err); code != 2 || !strings.Contains(string(out), "no server named nomad (the servers: consul traefik1 traefik2 traefik3 elasticsearch)") || strings.Contains(string(out), "building") {
		t.Errorf("an unknown server: exit %d, want 2, naming it, before any build:\n%s", code, out)
	}
}

// exitCode is the exit status of a command's error (0 for none).
func exitCode(err error) int {
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}
