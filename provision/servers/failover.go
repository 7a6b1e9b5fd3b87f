package servers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Quorum is a Consul cluster of three servers (raft_multiplier = 1, as
// production tunes it: an election takes a second or a few) and client
// agents, on loopback with ports of their own.
type Quorum struct {
	Servers []*Consul
	Clients []*Consul
}

// NewQuorum starts three servers and a client agent per node name for the
// test, waits until they have a leader and every node is in the catalog,
// and stops them all when the test ends.
func NewQuorum(t testing.TB, clients ...string) *Quorum {
	t.Helper()
	dir := t.TempDir()
	q := &Quorum{}
	var log LogBuffer
	servers, err := retryBind(&log, func(attempt int, w io.Writer) ([]*Consul, error) {
		return startServers(context.Background(), filepath.Join(dir, strconv.Itoa(attempt)), 3, w)
	})
	if err != nil {
		t.Fatalf("three Consul servers: %v\n%s", err, log.Tail(4000))
	}
	q.Servers = servers
	t.Cleanup(func() {
		for _, s := range q.Servers {
			s.Stop()
		}
		if t.Failed() {
			t.Logf("consul servers' log:\n%s", log.Tail(6000))
		}
	})
	for _, n := range clients {
		cdir := t.TempDir()
		q.Clients = append(q.Clients, forTest(t, "consul-"+n, func(log io.Writer) (*Consul, error) {
			return servers[0].StartClient(context.Background(), cdir, n, log)
		}))
	}
	return q
}

// startServers starts n servers that find each other, and waits until
// each knows the leader and its node is in the catalog.
func startServers(ctx context.Context, dir string, n int, logw io.Writer) ([]*Consul, error) {
	ports, err := FreePorts(4 * n)
	if err != nil {
		return nil, err
	}
	bin, err := ConsulBinary()
	if err != nil {
		return nil, err
	}
	var out []*Consul
	stop := func() {
		for _, s := range out {
			s.Stop()
		}
	}
	for i := range n {
		p := ports[4*i : 4*i+4]
		node := fmt.Sprintf("server-%d", i)
		args := []string{"agent", "-server", "-bootstrap-expect=" + strconv.Itoa(n), "-bind=127.0.0.1", "-client=127.0.0.1",
			"-node=" + node, "-data-dir=" + filepath.Join(dir, node), "-dns-port=-1", "-grpc-port=-1", "-grpc-tls-port=-1",
			"-http-port=" + strconv.Itoa(p[0]), "-serf-lan-port=" + strconv.Itoa(p[1]), "-serf-wan-port=" + strconv.Itoa(p[2]),
			"-server-port=" + strconv.Itoa(p[3]), "-retry-interval=1s", "-hcl=performance { raft_multiplier = 1 }",
			// A returning server votes again 2 s after it is stable (10 s
			// by default), so that a test may kill another soon after.
			"-hcl=autopilot { server_stabilization_time = \"2s\" }"}
		for j := range n {
			if j != i {
				args = append(args, "-retry-join=127.0.0.1:"+strconv.Itoa(ports[4*j+1]))
			}
		}
		c := &Consul{Addr: "127.0.0.1:" + strconv.Itoa(p[0]), Node: node, serfLAN: p[1], args: args, logw: logw}
		if c.proc, err = startProcess(bin, args, logw); err != nil {
			stop()
			return nil, err
		}
		out = append(out, c)
	}
	var procs []*process
	for _, s := range out {
		procs = append(procs, s.proc)
	}
	err = waitReady(ctx, 60*time.Second, procs, func() bool {
		return !slices.ContainsFunc(out, func(s *Consul) bool { return s.Leader() == "" || !s.inCatalog(s.Node) })
	})
	if err != nil {
		stop()
		return nil, fmt.Errorf("the servers did not elect a leader: %w", err)
	}
	return out, nil
}

// waitReady waits until ready, and fails when one of procs exits first
// or after limit.
func waitReady(ctx context.Context, limit time.Duration, procs []*process, ready func() bool) error {
	exited := func() bool { return slices.ContainsFunc(procs, (*process).exited) }
	err := waitFor(ctx, limit, func() bool { return exited() || ready() })
	if err == nil && exited() {
		err = errors.New("a process exited")
	}
	return err
}

// Leader is the raft address of the leader c knows, "" when it knows
// none.
func (c *Consul) Leader() string {
	body, ok := get("http://" + c.Addr + "/v1/status/leader")
	if !ok {
		return ""
	}
	return string(bytes.Trim(body, "\"\n"))
}

// Leader is the server that leads now (nil when none does).
func (q *Quorum) Leader() *Consul {
	for _, s := range q.Servers {
		if s.proc.exited() {
			continue
		}
		leader := s.Leader()
		for _, l := range q.Servers {
			if leader != "" && strings.HasSuffix(leader, ":"+l.arg("-server-port=")) {
				return l
			}
		}
	}
	return nil
}

// KillLeader kills the leading server with SIGKILL, as a crash does, and
// returns it. The others elect a new leader among themselves.
func (q *Quorum) KillLeader(t testing.TB) *Consul {
	t.Helper()
	l := q.Leader()
	if l == nil {
		t.Fatal("no Consul server leads")
	}
	l.proc.signal(syscall.SIGKILL)
	return l
}

// arg is the value of one of the agent's flags.
func (c *Consul) arg(prefix string) string {
	for _, a := range c.args {
		if v, ok := strings.CutPrefix(a, prefix); ok {
			return v
		}
	}
	return ""
}

// signal sends sig to the process group and, for SIGKILL, waits until
// it is gone.
func (p *process) signal(sig syscall.Signal) {
	_ = syscall.Kill(-p.cmd.Process.Pid, sig)
	if sig == syscall.SIGKILL {
		<-p.gone
	}
}

// NewMasters starts a cluster named name of n master-eligible nodes
// (discovery.zen.minimum_master_nodes a majority, Elasticsearch's default
// failure detection) for the test, waits until it is green with all n,
// and stops them when the test ends. The nodes are name-0, name-1, ...
func NewMasters(t testing.TB, name string, n int) []*Elasticsearch {
	t.Helper()
	dir := t.TempDir()
	var log LogBuffer
	nodes, err := retryBind(&log, func(attempt int, w io.Writer) ([]*Elasticsearch, error) {
		return startMasters(context.Background(), filepath.Join(dir, strconv.Itoa(attempt)), name, n, w)
	})
	if err != nil {
		t.Fatalf("%d Elasticsearch nodes: %v\n%s", n, err, log.Tail(4000))
	}
	t.Cleanup(func() {
		for _, e := range nodes {
			e.Stop()
		}
		if t.Failed() {
			t.Logf("elasticsearch %s log:\n%s", name, log.Tail(6000))
		}
	})
	return nodes
}

func startMasters(ctx context.Context, dir, name string, n int, logw io.Writer) ([]*Elasticsearch, error) {
	ports, err := FreePorts(2 * n)
	if err != nil {
		return nil, err
	}
	var hosts []string
	for i := range n {
		hosts = append(hosts, "127.0.0.1:"+strconv.Itoa(ports[2*i+1]))
	}
	var out []*Elasticsearch
	stop := func() {
		for _, e := range out {
			e.Stop()
		}
	}
	for i := range n {
		e, err := startNode(ctx, dir, fmt.Sprintf("%s-%d", name, i), ports[2*i], map[string]string{
			"cluster.name":                         name,
			"transport.tcp.port":                   strconv.Itoa(ports[2*i+1]),
			"discovery.zen.ping.unicast.hosts":     strings.Join(hosts, ","),
			"discovery.zen.ping.multicast.enabled": "false",
			"discovery.zen.minimum_master_nodes":   strconv.Itoa(n/2 + 1),
		}, logw)
		if err != nil {
			stop()
			return nil, err
		}
		e.TransportAddr = hosts[i]
		out = append(out, e)
	}
	var procs []*process
	for _, e := range out {
		procs = append(procs, e.proc)
	}
	err = waitReady(ctx, 120*time.Second, procs, func() bool {
		_, ok := get(out[0].URL + "/_cluster/health?wait_for_status=green&wait_for_nodes=" + strconv.Itoa(n) + "&timeout=1s")
		return ok
	})
	if err != nil {
		stop()
		return nil, fmt.Errorf("cluster %s of %d nodes did not start: %w", name, n, err)
	}
	return out, nil
}

// Master is the node of nodes that is the elected master now, as a
// live node sees it (nil when none is).
func Master(nodes []*Elasticsearch) *Elasticsearch {
	for _, e := range nodes {
		if e.proc.exited() {
			continue
		}
		body, ok := get(e.URL + "/_cat/master?h=node")
		if !ok {
			continue
		}
		name := strings.TrimSpace(string(body))
		for _, m := range nodes {
			if m.Name == name {
				return m
			}
		}
	}
	return nil
}

// Kill kills the node with SIGKILL, as a crash does.
func (e *Elasticsearch) Kill() { e.proc.signal(syscall.SIGKILL) }

// Restart starts a killed server again on its ports and data: it rejoins
// the others. It waits until the server votes again: Consul's autopilot
// may have removed the dead server from the raft configuration, and
// promotes a returning one to voter only once it has been stable
// (server_stabilization_time, 2 s here); killing another server before
// that would leave no quorum.
func (q *Quorum) Restart(t testing.TB, s *Consul) {
	t.Helper()
	voters := func() bool {
		body, ok := get("http://" + s.Addr + "/v1/operator/raft/configuration")
		var c struct{ Servers []struct{ Voter bool } }
		if !ok || json.Unmarshal(body, &c) != nil {
			return false
		}
		n := 0
		for _, v := range c.Servers {
			if v.Voter {
				n++
			}
		}
		return n == len(q.Servers)
	}
	if err := s.start(context.Background(), s.args, s.logw, voters, "vote again"); err != nil {
		t.Fatal(err)
	}
}
