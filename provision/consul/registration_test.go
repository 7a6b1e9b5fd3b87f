package consul

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestReportedFields holds the struct a plan decodes the agent's answer
// into to the table of the registration's fields: a field the table has
// and the struct lacks would be read as absent, and reset by the next
// registration.
func TestReportedFields(t *testing.T) {
	ty := reflect.TypeFor[reportedService]()
	for _, a := range RegistrationFields {
		if _, ok := ty.FieldByName(a.Wire); !ok {
			t.Errorf("reportedService lacks %s (%s)", a.Wire, a.Name)
		}
	}
}

// TestReadBack reads a registration as Consul 1.15.4 reports it (GET
// /v1/agent/service/web-1 after issue 56's registration): what the agent
// fills in itself is left out, what a person set is kept, and a snapshot
// of it reads back the same.
func TestReadBack(t *testing.T) {
	answer := `{"web-1": {"ID": "web-1", "Service": "web", "Tags": [], "Meta": {}, "Port": 8080, "Address": "127.0.0.1",
	  "TaggedAddresses": {"lan_ipv4": {"Address": "127.0.0.1", "Port": 8080}, "wan": {"Address": "198.51.100.5", "Port": 80},
	    "wan_ipv4": {"Address": "127.0.0.1", "Port": 8080}, "consul-virtual": {"Address": "240.0.0.1", "Port": 8080}},
	  "Weights": {"Passing": 10, "Warning": 1}, "EnableTagOverride": true, "ContentHash": "9b4c3ae3e6c7ac5a", "Datacenter": "dc1"},
	  "plain": {"ID": "plain", "Service": "plain", "Tags": [], "Meta": {}, "Port": 80, "Address": "127.0.0.1",
	  "TaggedAddresses": {"lan_ipv4": {"Address": "127.0.0.1", "Port": 80}, "wan_ipv4": {"Address": "127.0.0.1", "Port": 80}},
	  "Weights": {"Passing": 1, "Warning": 1}, "EnableTagOverride": false, "ContentHash": "1", "Datacenter": "dc1"}}`
	var reported map[string]*reportedService
	if err := json.Unmarshal([]byte(answer), &reported); err != nil {
		t.Fatal(err)
	}
	got, err := services(reported)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"TaggedAddresses":   map[string]any{"wan": map[string]any{"Address": "198.51.100.5", "Port": 80.0}},
		"Weights":           map[string]any{"Passing": 10.0, "Warning": 1.0},
		"EnableTagOverride": true,
	}
	if d := cmp.Diff(want, got["web-1"].Fields); d != "" {
		t.Errorf("web-1 (-want +got):\n%s", d)
	}
	if got["plain"].Fields != nil {
		t.Errorf("a plain service reads back %v", got["plain"].Fields)
	}
	snap, _ := json.Marshal(agentState{Services: got})
	st, err := (&Backend{}).DecodeState(json.NewDecoder(bytes.NewReader(snap)))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(got, st.(agentState).Services, cmp.AllowUnexported(agentService{})); d != "" {
		t.Errorf("the snapshot reads back otherwise (-live +snapshot):\n%s", d)
	}
	if b, _ := json.Marshal(got["plain"]); string(b) != `{"ID":"plain","Service":"plain","Tags":[],"Meta":{},"Port":80,"Address":"127.0.0.1"}` {
		t.Errorf("a plain service is written %s", b)
	}
}

// TestStoredShared decodes a snapshot's services whose meta and other
// fields repeat: each reads back as written, the same text once (one map
// for both), and a meta that is not Consul's (a number) is an error that
// names its service.
func TestStoredShared(t *testing.T) {
	same := &agentService{Tags: []string{}, Meta: map[string]string{"managed-by": "provision"}, Port: 80, Address: "127.0.0.1",
		Fields: map[string]any{"Weights": map[string]any{"Passing": 10.0, "Warning": 1.0}}}
	services := map[string]*agentService{}
	for _, id := range []string{"a", "b", "c"} {
		s := *same
		s.ID, s.Service = id, id
		services[id] = &s
	}
	services["c"].Meta = map[string]string{"team": "edge"}
	services["c"].Fields = nil
	snap, _ := json.Marshal(agentState{Services: services})
	st, err := (&Backend{}).DecodeState(json.NewDecoder(bytes.NewReader(snap)))
	if err != nil {
		t.Fatal(err)
	}
	got := st.(agentState).Services
	if d := cmp.Diff(services, got); d != "" {
		t.Errorf("the snapshot reads back otherwise (-written +read):\n%s", d)
	}
	if reflect.ValueOf(got["a"].Meta).UnsafePointer() != reflect.ValueOf(got["b"].Meta).UnsafePointer() ||
		reflect.ValueOf(got["a"].Fields).UnsafePointer() != reflect.ValueOf(got["b"].Fields).UnsafePointer() {
		t.Error("the same meta and fields are decoded twice")
	}
	bad := `{"services": {"web": {"ID": "web", "Service": "web", "Meta": {"shard": 3}}}}`
	if _, err := (&Backend{}).DecodeState(json.NewDecoder(strings.NewReader(bad))); err == nil || !strings.Contains(err.Error(), `service "web", Meta: cannot unmarshal number`) {
		t.Errorf("a numeric meta value: %v", err)
	}
}

// TestKeepLive registers again what the specs declare with the live
// values of what they leave out, and their declared values over the live
// ones where they differ.
func TestKeepLive(t *testing.T) {
	l := &agentService{ID: "web-1", Service: "web", Address: "127.0.0.1", Port: 8080, Fields: map[string]any{
		"TaggedAddresses":   map[string]any{"wan": map[string]any{"Address": "198.51.100.5", "Port": 80.0}},
		"EnableTagOverride": true,
	}}
	for _, c := range []struct {
		name     string
		declared map[string]any
		want     map[string]any
	}{
		{"nothing declared", nil, l.Fields},
		{"the default weights, as live", map[string]any{"Weights": map[string]any{"Passing": 1.0, "Warning": 1.0}}, l.Fields},
		{"a weight, the other kept", map[string]any{"Weights": map[string]any{"Passing": 10.0}}, map[string]any{
			"TaggedAddresses": l.Fields["TaggedAddresses"], "EnableTagOverride": true, "Weights": map[string]any{"Passing": 10.0, "Warning": 1.0}}},
		{"another address beside the live one", map[string]any{"TaggedAddresses": map[string]any{"lan": map[string]any{"Address": "10.0.0.5", "Port": 8080.0}}}, map[string]any{
			"EnableTagOverride": true, "TaggedAddresses": map[string]any{"wan": map[string]any{"Address": "198.51.100.5", "Port": 80.0}, "lan": map[string]any{"Address": "10.0.0.5", "Port": 8080.0}}}},
	} {
		want := registration{Fields: c.declared}
		keepLive(&want, l, withDefaults(l))
		if d := cmp.Diff(c.want, want.Fields); d != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, d)
		}
	}
}

// TestDerivedOnly: the tagged addresses a plan compares as bytes, without
// decoding them, are only the two the agent derives, as a dev agent
// (indented) and any other (compact) write them; anything else is decoded.
func TestDerivedOnly(t *testing.T) {
	for _, c := range []struct {
		address string
		tagged  string
		want    bool
	}{
		{"127.0.0.1", ``, true},
		{"127.0.0.1", `{}`, true},
		{"127.0.0.1", `{"lan_ipv4":{"Address":"127.0.0.1","Port":80},"wan_ipv4":{"Address":"127.0.0.1","Port":80}}`, true},
		{"127.0.0.1", "{\n    \"lan_ipv4\": {\n        \"Address\": \"127.0.0.1\",\n        \"Port\": 80\n    },\n    \"wan_ipv4\": {\n        \"Address\": \"127.0.0.1\",\n        \"Port\": 80\n    }\n}", true},
		{"::1", `{"lan_ipv6": {"Address": "::1", "Port": 80}, "wan_ipv6": {"Address": "::1", "Port": 80}}`, true},
		{"127.0.0.1", `{"lan_ipv4":{"Address":"127.0.0.1","Port":81},"wan_ipv4":{"Address":"127.0.0.1","Port":80}}`, false},
		{"127.0.0.1", `{"lan_ipv4":{"Address":"127.0.0.1","Port":80},"wan_ipv4":{"Address":"127.0.0.1","Port":80},"wan":{"Address":"198.51.100.5","Port":80}}`, false},
		{"127.0.0.1", `{"lan_ipv4":{"Address":"127.0.0. 1","Port":80},"wan_ipv4":{"Address":"127.0.0.1","Port":80}}`, false},
		{"127.0.0.1", `{"lan_ipv4":{"Address":"127.0.0.1","Port":80}}`, false},
	} {
		r := &reportedService{Address: c.address, Port: 80, TaggedAddresses: json.RawMessage(c.tagged)}
		if got := r.derivedOnly(); got != c.want {
			t.Errorf("%s at %s: derivedOnly %v, want %v", c.tagged, c.address, got, c.want)
		}
	}
}
