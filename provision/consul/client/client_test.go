package client_test

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/consul/api"
	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision"
	"github.com/provision-dev/provision/provision/adapter"
	"github.com/provision-dev/provision/provision/consul/client"
	"github.com/provision-dev/provision/provision/servers"
)

// open is the client of the agent at addr, as the specs' agent block
// "n1" would open it.
func open(t *testing.T, conf *api.Config) *client.Agent {
	t.Helper()
	a, err := client.Open(conf, adapter.Deadlines{}.OrDefault(), "n1", hcl.Range{Filename: "main.hcl"})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func config(addr string) *api.Config {
	conf := api.DefaultNonPooledConfig()
	conf.Address = addr
	return conf
}

// TestAgent reads a real Consul 1.15 agent through the client: its node
// and version, an endpoint with its headers, and a 404 as the engine's
// status error.
func TestAgent(t *testing.T) {
	agent := servers.NewConsul(t)
	a := open(t, config("http://"+agent.Addr))
	if a.Address() != "http://"+agent.Addr {
		t.Errorf("Address() = %s", a.Address())
	}
	ctx := context.Background()
	if node, err := a.NodeName(ctx); err != nil || node != agent.Node {
		t.Errorf("NodeName() = %q, %v; want %q", node, err, agent.Node)
	}
	if v := a.Version(ctx); !strings.HasPrefix(v, "Consul 1.") {
		t.Errorf("Version() = %q", v)
	}
	var services map[string]any
	if h, err := a.Get(ctx, "/v1/agent/services", &services); err != nil || h.Get("Content-Type") != "application/json" {
		t.Errorf("Get(/v1/agent/services): %v, headers %v", err, h)
	}
	_, err := a.Get(ctx, "/v1/agent/service/nope", &services)
	var se *adapter.StatusError
	if !errors.As(err, &se) || se.Code != http.StatusNotFound || !strings.HasPrefix(se.Message, "consul answered 404: ") {
		t.Errorf("a 404: %v", err)
	}
}

// TestUnreadable: an agent that does not answer, and one that wants a
// client certificate, are each said with what to set.
func TestUnreadable(t *testing.T) {
	ports, err := servers.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	down := open(t, config("http://127.0.0.1:"+strconv.Itoa(ports[0])))
	_, err = down.NodeName(context.Background())
	d := down.Unreadable(err)
	if d.Summary != `Cannot read the Consul agent "n1"` || !strings.Contains(d.Detail, "(the agent block's address)") || d.Subject.Filename != "main.hcl" {
		t.Errorf("an agent that does not answer: %s: %s", d.Summary, d.Detail)
	}

	tlsAgent := servers.NewTLSConsul(t)
	conf := config(tlsAgent.URL)
	conf.TLSConfig.CAFile = tlsAgent.CACert // no client certificate
	a := open(t, conf)
	_, err = a.NodeName(context.Background())
	d = a.Unreadable(err)
	if d.Summary != "Cannot reach the Consul agent over TLS" || !strings.Contains(d.Detail, "CONSUL_CLIENT_CERT") {
		t.Errorf("an agent that wants a client certificate: %s: %s", d.Summary, d.Detail)
	}
}

// TestRefusal: a 403 of an agent under default deny says that retrying
// will not help and where the policy comes from, and a refusal is not
// retried.
func TestRefusal(t *testing.T) {
	agent := servers.NewACLConsul(t)
	a := open(t, config(agent.URL))
	err := a.StatusError(func() error {
		_, err := a.API.KV().Put(&api.KVPair{Key: "app/x", Value: []byte("1")}, nil)
		return err
	}())
	var se *adapter.StatusError
	if !errors.As(err, &se) || se.Code != http.StatusForbidden || !strings.Contains(se.Message, "retrying will not help") || !strings.Contains(se.Message, "provision policy") {
		t.Errorf("a 403: %v", err)
	}
	if _, refused := adapter.Refused(err); !refused {
		t.Errorf("a 403 is not a refusal: %v", err)
	}
	if d := a.NoToken(); !strings.Contains(d.Detail, "CONSUL_HTTP_TOKEN") {
		t.Errorf("NoToken: %s", d.Detail)
	}
}

// TestFollow: a blocking query on a real agent's KV tells the feed of a
// change as it happens.
func TestFollow(t *testing.T) {
	agent := servers.NewConsul(t)
	a := open(t, config("http://"+agent.Addr))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	var changes []string
	changed := make(chan struct{}, 1)
	feed := provision.Feed{
		Changed: func(why string) {
			mu.Lock()
			changes = append(changes, why)
			mu.Unlock()
			select {
			case changed <- struct{}{}:
			default:
			}
		},
		Back: func() {},
		Log:  func(level, format string, args ...any) { t.Logf(level+": "+format, args...) },
	}
	done, asked := make(chan struct{}), make(chan struct{})
	var once sync.Once
	go func() {
		defer close(done)
		client.Follow(ctx, feed, "the keys under app/", "app/ changed", nil, func(ctx context.Context, index uint64) (uint64, error) {
			if index != 0 {
				once.Do(func() { close(asked) }) // the first answer, which is no change, is in
			}
			_, meta, err := a.API.KV().List("app/", (&api.QueryOptions{WaitIndex: index, WaitTime: time.Minute}).WithContext(ctx))
			if err != nil {
				return 0, err
			}
			return meta.LastIndex, nil
		})
	}()
	<-asked
	if _, err := a.API.KV().Put(&api.KVPair{Key: "app/x", Value: []byte("1")}, nil); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("no change seen in 10 s")
	}
	cancel()
	<-done
	mu.Lock()
	defer mu.Unlock()
	if len(changes) != 1 || changes[0] != "app/ changed" {
		t.Errorf("changes: %q", changes)
	}
}
