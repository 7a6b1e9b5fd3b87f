package search

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/provision-dev/provision/provision"
	"github.com/provision-dev/provision/provision/addrs"
	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/provision/servers"
)

// servedFrom is the member whose copy of index the tribe node at base
// serves ("" when it serves none), as its tribe.name index setting says
// in the tribe's cluster state (its _settings are blocked).
func servedFrom(t *testing.T, base, index string) string {
	t.Helper()
	resp, err := http.Get(base + "/_cluster/state/metadata/" + index + "?flat_settings=true&ignore_unavailable=true")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var s struct {
		Metadata struct {
			Indices map[string]struct {
				Settings map[string]any `json:"settings"`
			} `json:"indices"`
		} `json:"metadata"`
	}
	json.NewDecoder(resp.Body).Decode(&s)
	name, _ := s.Metadata.Indices[index].Settings["tribe.name"].(string)
	return name
}

func waitServed(t *testing.T, base, index, want string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for servedFrom(t, base, index) != want {
		if time.Now().After(deadline) {
			t.Fatalf("the tribe node %s serves %q from %q after 15s, want %q", base, index, servedFrom(t, base, index), want)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// otherTribe starts another tribe node joined to members, with more
// settings, for one test.
func otherTribe(t *testing.T, members []*servers.Elasticsearch, more map[string]string) *servers.Elasticsearch {
	t.Helper()
	var log servers.LogBuffer
	e, err := servers.StartTribeNode(context.Background(), t.TempDir(), members, more, &log)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.Tail(3000))
	}
	t.Cleanup(func() { e.Stop() })
	return e
}

// withCopyOnT2 makes the seed's .dashboard by hand on t2, with one saved
// document, and removes both copies when the test ends.
func withCopyOnT2(t *testing.T) {
	t.Helper()
	fresh(t, cluster(t).T1.URL, ".dashboard")
	handMadeOn(t, cluster(t).T2.URL)
	t.Cleanup(func() {
		fresh(t, cluster(t).T2.URL, ".dashboard")
		fresh(t, cluster(t).T1.URL, ".dashboard")
	})
}

func warnings(t *testing.T, tribeURL string) ([]string, []*plans.Change, *Backend) {
	t.Helper()
	b, changes, diags := plan(t, seed(t, "search_url="+cluster(t).T1.URL, "tribe_url="+tribeURL), plans.Converge)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	var out []string
	for _, d := range diags {
		out = append(out, d.Summary+": "+d.Detail)
	}
	return out, changes, b
}

// TestTribeServesAnotherCopy is the case on the real t1, t2 and
// tribe node (tribe.on_conflict unset: "any"): .dashboard made by hand on
// t2 with a saved document, then provision's .dashboard on t1. The plan
// warns at the index that t2 holds a copy with one document and that the
// tribe serves t2's; after the apply the verification fails, because the
// tribe node still serves t2's copy; and every later plan warns again.
func TestTribeServesAnotherCopy(t *testing.T) {
	withCopyOnT2(t)
	waitServed(t, cluster(t).Tribe.URL, ".dashboard", "t2")
	got, changes, b := warnings(t, cluster(t).Tribe.URL)
	want := `Index is served from t2, not from t1 through the tribe node: ".dashboard" is declared on t1; t2 (cluster t2) holds another copy with 1 document. ` +
		`The tribe node ` + cluster(t).Tribe.URL + ` serves t2's copy now; tribe.on_conflict is "any"`
	if len(got) != 1 || !strings.HasPrefix(got[0], want) || !strings.Contains(got[0], "prefer_t1") {
		t.Fatalf("plan warnings:\n%s\nwant one starting:\n%s", strings.Join(got, "\n"), want)
	}
	t.Logf("plan: %s", got[0])
	plansAsLive(t, seed(t, "search_url="+cluster(t).T1.URL, "tribe_url="+cluster(t).Tribe.URL))
	send(t, b, changes)
	_, err := b.verify(context.Background(), changes)
	if err == nil || !strings.Contains(err.Error(), `the tribe node serves another member's copy, not the one written on t1: ".dashboard" is served from t2`) {
		t.Fatalf("Verify after the apply: %v", err)
	}
	t.Logf("verify: %v", err)
	if got, _, _ := warnings(t, cluster(t).Tribe.URL); len(got) != 1 || !strings.HasPrefix(got[0], "Index is served from t2, not from t1") ||
		!strings.Contains(got[0], "holds another copy with 1 document") {
		t.Errorf("the plan after the apply does not warn again:\n%s", strings.Join(got, "\n"))
	}
}

// TestTribeOnConflict runs tribe nodes started with on_conflict prefer_t1
// and drop over the same two copies (t2's made by hand with the seed's four
// types and a document, t1's by provision).
func TestTribeOnConflict(t *testing.T) {
	withCopyOnT2(t)
	prefer := otherTribe(t, []*servers.Elasticsearch{cluster(t).T1, cluster(t).T2}, map[string]string{"tribe.on_conflict": "prefer_t1"})
	drop := otherTribe(t, []*servers.Elasticsearch{cluster(t).T1, cluster(t).T2}, map[string]string{"tribe.on_conflict": "drop"})

	got, changes, b := warnings(t, prefer.URL)
	if len(got) != 1 || !strings.Contains(got[0], "t2 (cluster t2) holds another copy with 1 document") {
		t.Fatalf("prefer_t1, plan warnings:\n%s", strings.Join(got, "\n"))
	}
	send(t, b, changes)
	msg, err := b.verify(context.Background(), changes)
	if err != nil || !strings.Contains(msg, "served from t1's copy") {
		t.Fatalf("prefer_t1, Verify = %q, %v", msg, err)
	}
	t.Logf("prefer_t1: served from %q; verify: %s", servedFrom(t, prefer.URL, ".dashboard"), msg)
	got, _, _ = warnings(t, prefer.URL)
	if len(got) != 1 || !strings.Contains(got[0], `tribe.on_conflict is "prefer_t1": the tribe node always serves t1's copy`) {
		t.Errorf("prefer_t1, plan after the apply:\n%s", strings.Join(got, "\n"))
	}

	got, changes, b = warnings(t, drop.URL)
	if len(got) != 1 || !strings.Contains(got[0], `tribe.on_conflict is "drop"`) || !strings.Contains(got[0], "serves no copy of it now") {
		t.Fatalf("drop, plan warnings:\n%s", strings.Join(got, "\n"))
	}
	t.Logf("drop: served from %q; plan: %s", servedFrom(t, drop.URL, ".dashboard"), got[0])
	if _, err := b.verify(context.Background(), []*plans.Change{{Addr: addrs.Addr{Kind: Index, Name: ".dashboard"}, Action: plans.NoOp,
		After: changes[0].After}}); err == nil || !strings.Contains(err.Error(), `tribe.on_conflict is "drop"`) {
		t.Errorf("drop, Verify: %v", err)
	}
}

// TestTribeWithoutTheMember: a tribe node that does not join the declared
// cluster is an error, since nothing written would ever show through it.
func TestTribeWithoutTheMember(t *testing.T) {
	onlyT2 := otherTribe(t, []*servers.Elasticsearch{cluster(t).T2}, nil)
	_, _, diags := plan(t, seed(t, "search_url="+cluster(t).T1.URL, "tribe_url="+onlyT2.URL), plans.Converge)
	if diff := cmp.Diff([]string{"dashboard.hcl:17: The tribe node does not join this cluster"}, diagLines(diags)); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	if !strings.Contains(diags[0].Detail, "joins t2 (cluster t2), but not the cluster \"t1\"") {
		t.Errorf("detail: %s", diags[0].Detail)
	}
}

// TestSameIndexOnTwoClusters declares one index name on both members:
// each address names its cluster, a short -target that would hit both is
// refused, and a full one plans the one copy it names.
func TestSameIndexOnTwoClusters(t *testing.T) {
	cfg := load(t, map[string]string{"main.hcl": fmt.Sprintf(`project = "twice"

search "t1" {
  url          = %q
  cluster_name = "t1"
}

search "t2" {
  url          = %q
  cluster_name = "t2"
}

index "twice" {
  search = "t1"
  mapping "doc" {
    properties = { title = "string" }
  }
}

index "twice" {
  search = "t2"
  mapping "doc" {
    properties = { title = "string" }
  }
}
`, cluster(t).T1.URL, cluster(t).T2.URL)})
	bs, diags := New(cfg, Options{Env: noEnv})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	p, diags := makePlan(context.Background(), cfg.Project, bs)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	var got []string
	for _, c := range p.Changes {
		got = append(got, c.Addr.String()+" on "+c.Backend)
	}
	if diff := cmp.Diff([]string{"search.t1.index.twice on search.t1", "search.t2.index.twice on search.t2"}, got); diff != "" {
		t.Errorf("addresses (-want +got):\n%s", diff)
	}
	short, _ := testLanguage.Kinds().ParseTarget("index.twice")
	if err := p.Target([]addrs.Addr{short}, nil); err == nil || !strings.Contains(err.Error(), "index.twice matches 2 objects of this plan (search.t1.index.twice, search.t2.index.twice)") {
		t.Errorf("a short target that hits both: %v", err)
	}
	full, _ := testLanguage.Kinds().ParseTarget("search.t2.index.twice")
	if err := p.Target([]addrs.Addr{full}, nil); err != nil || len(p.Changes) != 1 || p.Changes[0].Backend != "search.t2" {
		t.Errorf("-target search.t2.index.twice: %v, %d changes", err, len(p.Changes))
	}
}

// TestTribeBlocks applies the seed's .dashboard on t1 behind tribe nodes
// made read-only as production makes them (writes and metadata blocked:
// the shared tribe), with writes blocked only, and with no block. Each
// apply is proven through the tribe's cluster state and a search, and the
// plan notes the blocks in one line, never a warning; the converged plan
// is empty. A tribe that does not join t1, and one that is down, still
// fail.
func TestTribeBlocks(t *testing.T) {
	members := []*servers.Elasticsearch{cluster(t).T1, cluster(t).T2}
	tribes := []struct {
		name, url, note, proof string
	}{
		{"both blocks", cluster(t).Tribe.URL, "blocks writes and metadata (tribe.blocks.write, tribe.blocks.metadata): its readers get documents and searches, not mappings or settings", "; the tribe node blocks writes and metadata."},
		{"write block", otherTribe(t, members, map[string]string{"tribe.blocks.write": "true"}).URL, "blocks writes (tribe.blocks.write)", "; the tribe node blocks writes."},
		{"no block", otherTribe(t, members, nil).URL, "", "."},
	}
	for _, tr := range tribes {
		t.Run(tr.name, func(t *testing.T) {
			fresh(t, cluster(t).T1.URL, ".dashboard")
			cfg := seed(t, "search_url="+cluster(t).T1.URL, "tribe_url="+tr.url)
			b, changes, diags := plan(t, cfg, plans.Converge)
			if len(diags) != 0 {
				t.Fatalf("plan: %v", diags)
			}
			st, _ := b.Read(context.Background(), plans.Converge)
			planned, _ := provision.PlanBackend(plans.Converge, b, st)
			notes := planned.Notes
			if tr.note == "" && len(notes) != 0 || tr.note != "" && (len(notes) != 1 || !strings.Contains(notes[0], tr.note)) {
				t.Errorf("plan notes %q, want one containing %q", notes, tr.note)
			}
			send(t, b, changes)
			line, err := b.verify(context.Background(), changes)
			want := `".dashboard" and 4 mapping types are visible through the tribe node ` + tr.url + `, served from t1's copy; a search there answers from 5 shards (0 documents)` + tr.proof
			if err != nil || !strings.HasSuffix(line, want) {
				t.Fatalf("verify = %q, %v; want it to end %q", line, err, want)
			}
			t.Logf("proof: %s", line)
			if len(notes) > 0 {
				t.Logf("plan note: %s", notes[0])
			}
			_, again, diags := plan(t, cfg, plans.Converge)
			if len(diags) != 0 || len(again) != 1 || again[0].Action != plans.NoOp {
				t.Errorf("converged plan: %v %v", requestLines(again), diags)
			}
		})
	}

	t.Run("not joined to t1", func(t *testing.T) {
		onlyT2 := otherTribe(t, []*servers.Elasticsearch{cluster(t).T2}, servers.ReadOnly())
		_, _, diags := plan(t, seed(t, "search_url="+cluster(t).T1.URL, "tribe_url="+onlyT2.URL), plans.Converge)
		if len(diags) != 1 || diags[0].Summary != "The tribe node does not join this cluster" || !strings.Contains(diags[0].Detail, "t2 (cluster t2)") {
			t.Errorf("plan against a blocked tribe of t2 only: %v", diags)
		}
	})

	t.Run("down", func(t *testing.T) {
		ports, err := servers.FreePorts(1)
		if err != nil {
			t.Fatal(err)
		}
		fresh(t, cluster(t).T1.URL, ".dashboard")
		down := fmt.Sprintf("http://127.0.0.1:%d", ports[0])
		b, changes, diags := plan(t, seed(t, "search_url="+cluster(t).T1.URL, "tribe_url="+down), plans.Converge)
		if len(diags) != 1 || diags[0].Summary != "Cannot read the tribe node" {
			t.Errorf("plan against a tribe that is down: %v", diags)
		}
		send(t, b, changes)
		if _, err := b.verify(context.Background(), changes); err == nil || !strings.Contains(err.Error(), "not visible through the tribe node "+down) {
			t.Errorf("verify against a tribe that is down: %v", err)
		}
	})
}

// TestTribeDocumentsAnotherCopy: t2's hand-made .dashboard holds the
// search "errors" with another title, and the tribe node serves t2's
// copy. The saved objects written on t1 are not what the dashboard tool
// reads: the proof names the one served with another source and those
// not served at all.
func TestTribeDocumentsAnotherCopy(t *testing.T) {
	withCopyOnT2(t)
	esDo(t, cluster(t).T2.URL, "PUT", "/.dashboard/search/errors?refresh=true", `{"title":"Errors, on t2"}`)
	waitServed(t, cluster(t).Tribe.URL, ".dashboard", "t2")
	b, p := planDocs(t, savedObjects(t))
	mustApply(t, b, p)
	_, err := b.verifyDocuments(context.Background(), p.Changes)
	for _, want := range []string{".dashboard/search/errors is served with another source (another member's copy of the index, or an edit since)",
		".dashboard/index-pattern/logs-* is not served", ".dashboard/dashboard/edge is not served"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("the proof of the documents lacks %q: %v", want, err)
		}
	}
	t.Logf("proof: %v", err)
}
