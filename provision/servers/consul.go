package servers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// ConsulVersion is the Consul agent the tests and the demo run.
const ConsulVersion = "1.15.4"

// CacheDir is where .ci/install-servers puts the servers:
// $PROVISION_CACHE, else $XDG_CACHE_HOME/provision, else ~/.cache/provision.
func CacheDir() string {
	if d := os.Getenv("PROVISION_CACHE"); d != "" {
		return d
	}
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "provision")
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cache", "provision")
}

// ConsulBinary is the installed Consul agent.
func ConsulBinary() (string, error) {
	return installed(filepath.Join(CacheDir(), "consul-"+ConsulVersion, "consul"))
}

func installed(path string) (string, error) {
	if _, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("%s is not installed: run .ci/install-servers (or make servers)", path)
	}
	return path, nil
}

// Consul is an agent on loopback: a dev agent (a server), or a client
// agent of a cluster.
type Consul struct {
	Addr string // HTTP API, host:port
	Node string // the node name
	// serfLAN is the port other agents join; serfWAN the port the
	// servers of other datacenters join (a server's).
	serfLAN, serfWAN int
	proc             *process
	// args and ready start the agent again (Restart); logw is its log.
	args  []string
	ready func() bool
	logw  io.Writer
}

// StartConsul starts a dev agent with every port chosen free, and waits
// until it has elected itself leader and its node is in the catalog (a
// fresh agent answers "Missing node registration" to a session until then).
// extra are more of the agent's flags, such as -hcl=enable_script_checks=true.
func StartConsul(ctx context.Context, dir string, logw io.Writer, extra ...string) (*Consul, error) {
	return retryBind(logw, func(attempt int, w io.Writer) (*Consul, error) {
		ports, err := FreePorts(6)
		if err != nil {
			return nil, err
		}
		args := []string{"agent", "-dev", "-bind=127.0.0.1", "-client=127.0.0.1", "-node=provision-test", "-dns-port=-1",
			"-data-dir=" + filepath.Join(dir, fmt.Sprintf("consul-data-%d", attempt))}
		for i, flag := range []string{"http-port", "serf-lan-port", "serf-wan-port", "server-port", "grpc-port", "grpc-tls-port"} {
			args = append(args, "-"+flag+"="+strconv.Itoa(ports[i]))
		}
		args = append(args, extra...)
		c := &Consul{Addr: "127.0.0.1:" + strconv.Itoa(ports[0]), Node: "provision-test", serfLAN: ports[1], serfWAN: ports[2]}
		return c, c.start(ctx, args, w, func() bool {
			body, ok := get("http://" + c.Addr + "/v1/status/leader")
			return ok && len(bytes.Trim(body, "\"\n")) > 0 && c.inCatalog(c.Node)
		}, "elect a leader and register its node")
	})
}

// start runs the agent with args and waits until ready, or fails when it
// exits first or after 30 s.
func (c *Consul) start(ctx context.Context, args []string, w io.Writer, ready func() bool, what string) error {
	c.args, c.ready, c.logw = args, ready, w
	bin, err := ConsulBinary()
	if err != nil {
		return err
	}
	if c.proc, err = startProcess(bin, args, w); err != nil {
		return err
	}
	err = waitFor(ctx, 30*time.Second, func() bool { return c.proc.exited() || ready() })
	if err == nil && c.proc.exited() {
		err = errors.New("the agent exited")
	}
	if err != nil {
		c.Stop()
		return fmt.Errorf("consul %s did not %s: %w", c.Node, what, err)
	}
	return nil
}

// retryBind starts a server (a Consul agent, an Elasticsearch node) up
// to three times, with new ports each time, when it could not bind one of
// them: a free port picked by FreePorts can be taken (as another
// connection's local port, or by another test's server) before the
// server binds it.
func retryBind[S any](logw io.Writer, start func(attempt int, w io.Writer) (S, error)) (S, error) {
	for attempt := 1; ; attempt++ {
		watch := &bindWatch{w: logw}
		s, err := start(attempt, watch)
		switch {
		case err == nil:
			return s, nil
		case !watch.failed.Load() || attempt == 3:
			return s, err
		}
	}
}

// bindWatch passes output through and notes a failed bind.
type bindWatch struct {
	w      io.Writer
	failed atomic.Bool
}

func (b *bindWatch) Write(p []byte) (int, error) {
	if bytes.Contains(bytes.ToLower(p), []byte("address already in use")) { // Go's and Java's words
		b.failed.Store(true)
	}
	return b.w.Write(p)
}

// inCatalog reports whether the node is in the catalog, as this agent
// reads it.
func (c *Consul) inCatalog(node string) bool {
	body, ok := get("http://" + c.Addr + "/v1/catalog/node/" + node)
	return ok && bytes.Contains(body, []byte(`"Node"`))
}

// WAN is the address the servers of another datacenter join over the
// WAN (-retry-join-wan).
func (c *Consul) WAN() string { return "127.0.0.1:" + strconv.Itoa(c.serfWAN) }

// StartClient starts a client agent of node name on loopback that joins
// the server c, in c's datacenter, with its own data directory and
// ports, and waits until its node is in the cluster's catalog.
func (c *Consul) StartClient(ctx context.Context, dir, node string, logw io.Writer) (*Consul, error) {
	return c.StartClientOn(ctx, dir, node, "127.0.0.1", logw)
}

// StartClientOn is StartClient on the loopback address ip (127.0.1.7):
// many agents, each on its own address as nodes are, stay under the
// server's limit of connections from one address
// (limits.rpc_max_conns_per_client, 100), which about 50 agents on one
// address reach.
func (c *Consul) StartClientOn(ctx context.Context, dir, node, ip string, logw io.Writer) (*Consul, error) {
	return retryBind(logw, func(attempt int, w io.Writer) (*Consul, error) {
		ports, err := FreePorts(2)
		if err != nil {
			return nil, err
		}
		args := []string{"agent", "-bind=" + ip, "-client=" + ip, "-node=" + node,
			"-data-dir=" + filepath.Join(dir, fmt.Sprintf("consul-%s-%d", node, attempt)),
			"-http-port=" + strconv.Itoa(ports[0]), "-dns-port=-1", "-serf-lan-port=" + strconv.Itoa(ports[1]),
			"-grpc-port=-1", "-retry-join=127.0.0.1:" + strconv.Itoa(c.serfLAN)}
		for _, a := range c.args {
			if strings.HasPrefix(a, "-datacenter=") {
				args = append(args, a)
			}
		}
		a := &Consul{Addr: ip + ":" + strconv.Itoa(ports[0]), Node: node, serfLAN: ports[1]}
		return a, a.start(ctx, args, w, func() bool { return c.inCatalog(node) && a.inCatalog(node) }, "join the cluster")
	})
}

// Stop stops the agent.
func (c *Consul) Stop() error { return c.proc.stop() }

// Restart stops the agent and starts it again on the same ports with an
// empty data directory under dir, as a node rebuilt with its agent: it
// comes back without its registrations, keys and sessions.
func (c *Consul) Restart(ctx context.Context, dir string) error {
	c.Stop()
	args := slices.Clone(c.args)
	for i, a := range args {
		if strings.HasPrefix(a, "-data-dir=") {
			args[i] = "-data-dir=" + filepath.Join(dir, "consul-data-restarted")
		}
	}
	return c.start(ctx, args, c.logw, c.ready, "come back")
}

// NewConsul starts an agent for the test, with the extra flags, and stops
// it when the test ends. A missing binary fails the test: the real-server tests never skip.
func NewConsul(t testing.TB, extra ...string) *Consul {
	t.Helper()
	dir := t.TempDir()
	return forTest(t, "consul", func(log io.Writer) (*Consul, error) { return StartConsul(context.Background(), dir, log, extra...) })
}

// NewConsulCluster starts a server and a client agent per node name (each
// with its own data directory and ports) for the test, waits until every
// node is in the catalog, and stops them when the test ends. The server
// comes first.
func NewConsulCluster(t testing.TB, nodes ...string) []*Consul {
	t.Helper()
	server := NewConsul(t)
	return append([]*Consul{server}, server.Clients(t, nodes...)...)
}

// Clients starts a client agent of the server c per node name, as
// NewConsulCluster does.
func (c *Consul) Clients(t testing.TB, nodes ...string) []*Consul {
	t.Helper()
	names, dirs := make([]string, len(nodes)), make([]string, len(nodes))
	for i, n := range nodes {
		names[i], dirs[i] = "consul-"+n, t.TempDir()
	}
	// The clients join side by side: one at a time, 20 took a minute.
	return allForTest(t, names, func(i int, log io.Writer) (*Consul, error) {
		return c.StartClient(context.Background(), dirs[i], nodes[i], log)
	})
}

// FreePorts returns n distinct free loopback ports.
func FreePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// portFree reports whether a loopback port can be listened on.
func portFree(p int) bool {
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
	if err != nil {
		return false
	}
	l.Close()
	return true
}

// process is a server in its own process group.
type process struct {
	cmd     *exec.Cmd
	done    chan error
	gone    chan struct{} // closed when the process has exited
	stopped sync.Once
}

// exited reports whether the process has ended.
func (p *process) exited() bool {
	select {
	case <-p.gone:
		return true
	default:
		return false
	}
}

func startProcess(bin string, args []string, logw io.Writer) (*process, error) {
	return startProcessEnv(bin, args, nil, logw)
}

// startProcessEnv is startProcess with env added to this process's
// environment; the server dies with this process (dieWithParent).
func startProcessEnv(bin string, args, env []string, logw io.Writer) (*process, error) {
	cmd := exec.Command(bin, args...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.Stdout, cmd.Stderr = logw, logw
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	dieWithParent(cmd.SysProcAttr)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &process{cmd: cmd, done: make(chan error, 1), gone: make(chan struct{})}
	go func() {
		err := cmd.Wait()
		close(p.gone)
		p.done <- err
	}()
	return p, nil
}

// stop sends SIGTERM to the group, then SIGKILL after 10 s; stopping a
// stopped process does nothing.
func (p *process) stop() error {
	p.stopped.Do(p.kill)
	return nil
}

func (p *process) kill() {
	pgid := -p.cmd.Process.Pid
	_ = syscall.Kill(pgid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(pgid, syscall.SIGKILL)
		<-p.done
	}
}

func waitFor(ctx context.Context, limit time.Duration, ok func() bool) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	for !ok() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return nil
}

func get(url string) ([]byte, bool) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, false
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return b, err == nil && resp.StatusCode == http.StatusOK
}
