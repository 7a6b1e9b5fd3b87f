package search

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/provision-dev/provision/provision/adapter"
	"github.com/provision-dev/provision/provision/plans"
	"github.com/rs/zerolog"
)

// toxic puts a Toxiproxy proxy in front of a real node and returns its
// URL and a function that adds (or, with "", removes) a toxic.
func toxic(t *testing.T, upstreamURL string) (string, func(string)) {
	t.Helper()
	srv := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop())
	p := toxiproxy.NewProxy(srv, "es", "127.0.0.1:0", strings.TrimPrefix(upstreamURL, "http://"))
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	return "http://" + p.Listen, func(js string) {
		t.Helper()
		if js == "" {
			p.Toxics.ResetToxics(context.Background())
			return
		}
		if _, err := p.Toxics.AddToxicJson(strings.NewReader(js)); err != nil {
			t.Fatal(err)
		}
	}
}

const stall = `{"name":"stall","type":"timeout","stream":"downstream","attributes":{"timeout":0}}`

// TestSearchFaults injects faults with Toxiproxy in front of the real t1
// and tribe node: before the plan's read, on the second write of an
// apply, and on the check through the tribe node. Each ends in bounded
// time with an error naming the server, and a re-run converges.
func TestSearchFaults(t *testing.T) {
	d := adapter.DefaultDeadlines
	d.Request = 2 * time.Second
	t1, t1Toxic := toxic(t, cluster(t).T1.URL)
	tr, trToxic := toxic(t, cluster(t).Tribe.URL)
	fresh(t, cluster(t).T1.URL, "faulty")
	cfg := fields(t, t1, "t1", "faulty", "string", "")
	open := func() *Backend {
		bs, diags := New(cfg, Options{Env: noEnv, Deadlines: d})
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		return bs[0].(*Backend)
	}
	bounded := func(name string, start time.Time, max time.Duration, err string, want string) {
		t.Helper()
		took := time.Since(start)
		if took > max || !strings.Contains(err, want) {
			t.Errorf("%s: after %s: %q; want %q within %s", name, took.Round(time.Millisecond), err, want, max)
		}
		t.Logf("%-32s ended in %s: %.120s", name, took.Round(10*time.Millisecond), err)
	}

	// Before the plan's read: a stall, then a reset.
	for _, fault := range []struct{ name, toxic, want string }{
		{"stall x plan read", stall, "no answer within 2s"},
		{"reset x plan read", `{"name":"reset","type":"reset_peer","stream":"downstream","attributes":{"timeout":0}}`, "connection reset by peer"},
	} {
		t1Toxic(fault.toxic)
		start := time.Now()
		_, _, diags := readPlan(open(), plans.Converge)
		bounded(fault.name, start, 5*time.Second, diags.Error(), fault.want)
		t1Toxic("")
	}

	// On the second write: PUT /faulty/ goes through, the mapping PUT stalls.
	b := open()
	changes, _, diags := readPlan(b, plans.Converge)
	if diags.HasErrors() || len(changes[0].Requests) != 2 {
		t.Fatalf("plan: %v %v", requestLines(changes), diags)
	}
	if err := b.Send(context.Background(), changes[0].Requests[0]); err != nil {
		t.Fatal(err)
	}
	t1Toxic(stall)
	start := time.Now()
	err := b.Send(context.Background(), changes[0].Requests[1])
	bounded("stall x 2nd write", start, 5*time.Second, errString(err), "no answer within 2s")
	t1Toxic("")
	b = open()
	changes, _, diags = readPlan(b, plans.Converge)
	// The stall held the answer, not the request: the mapping may have
	// been stored. Either way the re-plan holds at most that one request.
	if got := requestLines(changes); diags.HasErrors() || len(changes) != 1 || len(got) > 1 || len(got) == 1 && got[0] != "index.faulty update: PUT /faulty/_mapping/search" {
		t.Fatalf("re-plan after the stalled write: %v %v", got, diags)
	}
	send(t, b, changes)
	if _, changes, _ = plan(t, cfg, plans.Converge); changes[0].Action != plans.NoOp {
		t.Fatalf("not converged: %v", requestLines(changes))
	}

	// On the check through the tribe node.
	withTribe := load(t, map[string]string{"main.hcl": strings.Replace(fmt.Sprintf(fieldsSpec, cluster(t).T1.URL, "t1", "faulty", "string", ""),
		`cluster_name = "t1"`, `cluster_name = "t1"`+"\n  tribe_url    = \""+tr+"\"", 1)})
	bs, _ := New(withTribe, Options{Env: noEnv, Deadlines: d})
	vb := bs[0].(*Backend)
	trToxic(stall)
	start = time.Now()
	_, err = vb.verify(context.Background(), changes)
	bounded("stall x tribe verification", start, 20*time.Second, errString(err), "not visible through the tribe node")
	trToxic("")
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}
