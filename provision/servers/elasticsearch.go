package servers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"
)

// ElasticsearchVersion is the only Elasticsearch that runs here: the
// distribution inside the npm package elasticsearch-mock-js@1.0.6.
const ElasticsearchVersion = "2.4.1"

// ElasticsearchHome is the unpacked distribution.
func ElasticsearchHome() (string, error) {
	home := filepath.Join(CacheDir(), "elasticsearch-"+ElasticsearchVersion)
	_, err := installed(filepath.Join(home, "lib", "elasticsearch-"+ElasticsearchVersion+".jar"))
	return home, err
}

// Elasticsearch is one node on loopback.
type Elasticsearch struct {
	URL           string // http://127.0.0.1:PORT
	ClusterName   string
	TransportAddr string // 127.0.0.1:PORT, for unicast discovery
	Name          string // node.name
	proc          *process
}

// Stop stops the node.
func (e *Elasticsearch) Stop() error { return e.proc.stop() }

// startNode starts a node with the given -Des settings and waits until
// ready answers true.
func startNode(ctx context.Context, dir, name string, httpPort int, settings map[string]string, logw io.Writer) (*Elasticsearch, error) {
	home, err := ElasticsearchHome()
	if err != nil {
		return nil, err
	}
	data := filepath.Join(dir, name)
	if err := os.MkdirAll(data, 0o755); err != nil {
		return nil, err
	}
	args := []string{"-Xms256m", "-Xmx256m", "-Djava.awt.headless=true", "-Delasticsearch", "-Des.foreground=yes",
		"-Des.insecure.allow.root=true", "-Des.path.home=" + home,
		"-Des.path.data=" + filepath.Join(data, "data"), "-Des.path.logs=" + filepath.Join(data, "logs"),
		"-Des.network.host=127.0.0.1", "-Des.http.port=" + strconv.Itoa(httpPort), "-Des.node.name=" + name}
	keys := make([]string, 0, len(settings))
	for k := range settings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		args = append(args, "-Des."+k+"="+settings[k])
	}
	args = append(args, "-cp", filepath.Join(home, "lib", "elasticsearch-"+ElasticsearchVersion+".jar")+":"+filepath.Join(home, "lib", "*"),
		"org.elasticsearch.bootstrap.Elasticsearch", "start")
	p, err := startProcess("java", args, logw)
	if err != nil {
		return nil, err
	}
	e := &Elasticsearch{URL: "http://127.0.0.1:" + strconv.Itoa(httpPort), ClusterName: settings["cluster.name"], Name: name, proc: p}
	return e, nil
}

// NewCluster starts a one-node cluster named name for the test, as
// StartCluster does, and stops it when the test ends (its log shown if the
// test failed).
func NewCluster(t testing.TB, name string) *Elasticsearch {
	t.Helper()
	dir := t.TempDir()
	return forTest(t, "elasticsearch", func(log io.Writer) (*Elasticsearch, error) {
		return StartCluster(context.Background(), dir, name, log)
	})
}

// StartCluster starts a one-node cluster named name and waits for yellow.
func StartCluster(ctx context.Context, dir, name string, logw io.Writer) (*Elasticsearch, error) {
	return retryBind(logw, func(_ int, w io.Writer) (*Elasticsearch, error) { return startCluster(ctx, dir, name, w) })
}

func startCluster(ctx context.Context, dir, name string, logw io.Writer) (*Elasticsearch, error) {
	ports, err := FreePorts(2)
	if err != nil {
		return nil, err
	}
	transport := "127.0.0.1:" + strconv.Itoa(ports[1])
	e, err := startNode(ctx, dir, name, ports[0], map[string]string{
		"cluster.name":                         name,
		"transport.tcp.port":                   strconv.Itoa(ports[1]),
		"discovery.zen.ping.unicast.hosts":     transport,
		"discovery.zen.ping.multicast.enabled": "false",
	}, logw)
	if err != nil {
		return nil, err
	}
	e.TransportAddr = transport
	if err := waitFor(ctx, 90*time.Second, func() bool {
		if e.proc.exited() {
			return true // said below
		}
		_, ok := get(e.URL + "/_cluster/health?wait_for_status=yellow&timeout=1s")
		return ok
	}); err != nil || e.proc.exited() {
		e.Stop()
		return nil, fmt.Errorf("cluster %s did not start: %w", name, exitedOr(e, err))
	}
	return e, nil
}

// exitedOr is err, or that the node's process exited.
func exitedOr(e *Elasticsearch, err error) error {
	if e.proc.exited() {
		return errors.New("the node exited")
	}
	return err
}

// StartTribeNode starts a tribe node joined to members, with more
// settings (such as "tribe.on_conflict"), and waits until it sees a node
// of each.
func StartTribeNode(ctx context.Context, dir string, members []*Elasticsearch, more map[string]string, logw io.Writer) (*Elasticsearch, error) {
	return retryBind(logw, func(_ int, w io.Writer) (*Elasticsearch, error) { return startTribeNode(ctx, dir, members, more, w) })
}

func startTribeNode(ctx context.Context, dir string, members []*Elasticsearch, more map[string]string, logw io.Writer) (*Elasticsearch, error) {
	httpPorts, err := FreePorts(1)
	if err != nil {
		return nil, err
	}
	// ES 2.x's security manager lets the tribe's inner clients listen only
	// inside the tribe node's own transport range, so take a contiguous one.
	base, err := freeRange(len(members) + 1)
	if err != nil {
		return nil, err
	}
	settings := map[string]string{
		"cluster.name":                         "tribe",
		"transport.tcp.port":                   fmt.Sprintf("%d-%d", base, base+len(members)),
		"discovery.zen.ping.multicast.enabled": "false",
	}
	for i, m := range members {
		t := "tribe." + m.ClusterName + "."
		settings[t+"cluster.name"] = m.ClusterName
		settings[t+"discovery.zen.ping.unicast.hosts"] = m.TransportAddr
		settings[t+"discovery.zen.ping.multicast.enabled"] = "false"
		settings[t+"network.host"] = "127.0.0.1"
		settings[t+"transport.tcp.port"] = strconv.Itoa(base + 1 + i)
	}
	maps.Copy(settings, more)
	e, err := startNode(ctx, dir, "tribe", httpPorts[0], settings, logw)
	if err != nil {
		return nil, err
	}
	if err := waitFor(ctx, 90*time.Second, func() bool {
		if e.proc.exited() {
			return true // said below
		}
		body, ok := get(e.URL + "/_nodes/http")
		if !ok {
			return false
		}
		var nodes struct {
			Nodes map[string]struct{ Name string } `json:"nodes"`
		}
		if json.Unmarshal(body, &nodes) != nil {
			return false
		}
		seen := map[string]bool{}
		for _, n := range nodes.Nodes {
			seen[n.Name] = true
		}
		for _, m := range members {
			if !seen[m.ClusterName] {
				return false
			}
		}
		return true
	}); err != nil || e.proc.exited() {
		e.Stop()
		return nil, fmt.Errorf("the tribe node did not join its members: %w", exitedOr(e, err))
	}
	return e, nil
}

// freeRange finds n consecutive free ports.
func freeRange(n int) (int, error) {
	for attempt := 0; attempt < 50; attempt++ {
		ps, err := FreePorts(1)
		if err != nil {
			return 0, err
		}
		if ps[0]+n > 65535 {
			continue
		}
		ok := true
		for p := ps[0]; p < ps[0]+n && ok; p++ {
			ok = portFree(p)
		}
		if ok {
			return ps[0], nil
		}
	}
	return 0, fmt.Errorf("no %d consecutive free ports", n)
}

// ReadOnly are the settings that make a tribe node read-only as
// production runs it: document writes and every read of indices'
// metadata refused (Elasticsearch 2.4's tribe node reference,
// www.elastic.co/guide/en/elasticsearch/reference/2.4/modules-tribe.html).
func ReadOnly() map[string]string {
	return map[string]string{"tribe.blocks.write": "true", "tribe.blocks.metadata": "true"}
}

// Tribe is the seed's search setup: member clusters t1 and t2, and a
// read-only tribe node joined to both (both blocks on).
type Tribe struct {
	T1, T2, Tribe *Elasticsearch
}

// Stop stops all three nodes.
func (t *Tribe) Stop() error {
	for _, e := range []*Elasticsearch{t.Tribe, t.T1, t.T2} {
		if e != nil {
			e.Stop()
		}
	}
	return nil
}

// StartTribe starts t1 and t2 side by side, then the tribe node.
func StartTribe(ctx context.Context, dir string, logw io.Writer) (*Tribe, error) {
	t := &Tribe{}
	var wg sync.WaitGroup
	var err1, err2 error
	wg.Add(2)
	go func() { defer wg.Done(); t.T1, err1 = StartCluster(ctx, dir, "t1", logw) }()
	go func() { defer wg.Done(); t.T2, err2 = StartCluster(ctx, dir, "t2", logw) }()
	wg.Wait()
	if err1 != nil || err2 != nil {
		t.Stop()
		return nil, fmt.Errorf("starting the member clusters: %v %v", err1, err2)
	}
	var err error
	if t.Tribe, err = StartTribeNode(ctx, dir, []*Elasticsearch{t.T1, t.T2}, ReadOnly(), logw); err != nil {
		t.Stop()
		return nil, err
	}
	return t, nil
}

// NewTribe starts the seed's search setup for the test, as StartTribe
// does, and stops it when the test ends (its log shown if the test
// failed).
func NewTribe(t testing.TB) *Tribe {
	t.Helper()
	dir := t.TempDir()
	return forTest(t, "the tribe's clusters", func(log io.Writer) (*Tribe, error) {
		return StartTribe(context.Background(), dir, log)
	})
}
