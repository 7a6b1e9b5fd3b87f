package consul

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"reflect"
	"slices"
	"strconv"

	"github.com/provision-dev/provision/schema"
)

// registration is the body of PUT /v1/agent/service/register. Its
// fields are sent in this order: ID, Name, Tags, Address, Port, Meta,
// the other fields of the registration (Fields, in the order of
// RegistrationFields), Checks.
type registration struct {
	ID      string
	Name    string
	Tags    []string
	Address string
	Port    int
	Meta    map[string]string
	// Fields are the registration's other fields by wire name: those
	// declared and, on a live service, the live values of those the
	// specs leave out, which a registration would otherwise reset.
	Fields map[string]any
	Checks []check
}

// core is the part of a registration that has fields of its own, as it
// is on the wire.
type core struct {
	ID      string            `json:"ID"`
	Name    string            `json:"Name"`
	Tags    []string          `json:"Tags"`
	Address string            `json:"Address,omitempty"`
	Port    int               `json:"Port"`
	Meta    map[string]string `json:"Meta"`
}

func (r registration) MarshalJSON() ([]byte, error) {
	b := core{r.ID, r.Name, r.Tags, r.Address, r.Port, r.Meta}.appendJSON(nil)
	b = splice(b, schema.Wire(RegistrationFields, r.Fields))
	if len(r.Checks) > 0 {
		checks, err := json.Marshal(r.Checks)
		if err != nil {
			return nil, err
		}
		b = splice(b, append(append([]byte(`{"Checks":`), checks...), '}'))
	}
	return b, nil
}

func (r *registration) UnmarshalJSON(b []byte) error {
	var c core
	var rest map[string]any
	var checks struct{ Checks []check }
	for _, to := range []any{&c, &rest, &checks} {
		if err := json.Unmarshal(b, to); err != nil {
			return err
		}
	}
	*r = registration{ID: c.ID, Name: c.Name, Tags: c.Tags, Address: c.Address, Port: c.Port, Meta: c.Meta, Fields: rest, Checks: checks.Checks}
	for _, k := range []string{"ID", "Name", "Tags", "Address", "Port", "Meta", "Checks"} {
		delete(r.Fields, k)
	}
	return nil
}

// appendJSON appends c to b as json.Marshal writes it (FuzzCoreJSON
// holds it to that), without reflection: a plan encodes every
// registration it compares, and at 100,000 services json.Marshal's
// reflection was a tenth of the plan's own work
// (docs/internals/performance.md).
func (c core) appendJSON(b []byte) []byte {
	b = schema.AppendJSONString(append(b, `{"ID":`...), c.ID)
	b = schema.AppendJSONString(append(b, `,"Name":`...), c.Name)
	b = schema.AppendJSON(append(b, `,"Tags":`...), c.Tags)
	if c.Address != "" {
		b = schema.AppendJSONString(append(b, `,"Address":`...), c.Address)
	}
	b = strconv.AppendInt(append(b, `,"Port":`...), int64(c.Port), 10)
	return append(schema.AppendJSON(append(b, `,"Meta":`...), c.Meta), '}')
}

// splice joins two JSON objects into one, a's keys first.
func splice(a, b []byte) []byte {
	if len(b) <= 2 {
		return a
	}
	if len(a) <= 2 {
		return b
	}
	out := make([]byte, 0, len(a)+len(b)-1) // a plan keeps it: no room to grow
	return append(append(append(out, a[:len(a)-1]...), ','), b[1:]...)
}

// check is one check of a registration: its ID and name, its fields
// (CheckFields) by wire name, and the status it starts in.
type check struct {
	CheckID string
	Name    string
	Def     map[string]any
	// Status is the state a check starts in until it first runs (up to
	// its interval later), when the declaration gives none. Consul's
	// default is critical, and Traefik drops the route of a service with
	// a critical check: a check added to a live gated service would take
	// /api away until then. provision says warning, Consul's word for
	// "not known to be well" that Traefik 2 and 3 still serve; a
	// re-registration keeps a check's current status (Consul restores it
	// from its snapshot of the agent's checks).
	Status string
}

func (c check) MarshalJSON() ([]byte, error) {
	head, err := json.Marshal(struct {
		CheckID string `json:"CheckID"`
		Name    string `json:"Name"`
	}{c.CheckID, c.Name})
	if err != nil {
		return nil, err
	}
	def := maps.Clone(c.Def)
	delete(def, "CheckID")
	b := splice(head, schema.Wire(CheckFields, def))
	if c.Status != "" {
		st, _ := json.Marshal(c.Status)
		b = splice(b, append(append([]byte(`{"Status":`), st...), '}'))
	}
	return b, nil
}

func (c *check) UnmarshalJSON(b []byte) error {
	var def map[string]any
	if err := json.Unmarshal(b, &def); err != nil {
		return err
	}
	c.CheckID, _ = def["CheckID"].(string)
	c.Name, _ = def["Name"].(string)
	c.Status, _ = def["Status"].(string)
	delete(def, "CheckID")
	delete(def, "Name")
	delete(def, "Status")
	c.Def = def
	return nil
}

// initialStatus is the status a check is registered in: see check.Status.
const initialStatus = "warning"

// agentService is what a plan reads of a service in GET
// /v1/agent/services: its ID, name, tags, meta, port and address, and
// the rest of the registration (Fields) less what the agent derives and
// what it reports of every service alike (see normalize).
type agentService struct {
	ID      string
	Service string
	Tags    []string
	Meta    map[string]string
	Port    int
	Address string
	// Fields are the registration's other fields by wire name; a
	// snapshot writes them under Fields, and a plain service has none.
	Fields map[string]any `json:",omitempty"`
}

// appendJSON appends s to b as json.Marshal writes it, without
// reflection: a plan's fingerprint encodes every live service in its
// scope (FuzzCoreJSON holds it to json.Marshal).
func (s *agentService) appendJSON(b []byte) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	b = schema.AppendJSONString(append(b, `{"ID":`...), s.ID)
	b = schema.AppendJSONString(append(b, `,"Service":`...), s.Service)
	b = schema.AppendJSON(append(b, `,"Tags":`...), s.Tags)
	b = schema.AppendJSON(append(b, `,"Meta":`...), s.Meta)
	b = strconv.AppendInt(append(b, `,"Port":`...), int64(s.Port), 10)
	b = schema.AppendJSONString(append(b, `,"Address":`...), s.Address)
	if len(s.Fields) > 0 {
		b = schema.AppendJSON(append(b, `,"Fields":`...), s.Fields)
	}
	return append(b, '}')
}

// reportedService is what GET /v1/agent/services reports of a service
// (Consul 1.15's api.AgentService, as the agent's endpoint writes it):
// decoded as a struct, whole answers at once (a map, or an UnmarshalJSON
// per service, which scans each twice, is slower, which a plan of 10,000
// services feels: docs/internals/performance.md). Its fields beyond
// agentService's are those of RegistrationFields
// (TestReportedFields holds them to it); what it leaves out (ContentHash,
// Datacenter) the agent reports of every service alike, and no
// registration sets.
type reportedService struct {
	ID, Service       string
	Tags              []string
	Meta              map[string]string
	Port              int
	Address           string
	Kind              string
	SocketPath        string
	EnableTagOverride bool
	Weights           struct{ Passing, Warning float64 } // zero: not reported
	// TaggedAddresses is decoded only when it is not the two the agent
	// derives for every service with an IP address (derivedOnly).
	TaggedAddresses json.RawMessage
	Proxy           json.RawMessage
	Connect         json.RawMessage
	// Namespace and Partition are Consul Enterprise's: kept when an
	// agent reports them, so that a registration carries them back.
	Namespace string
	Partition string
}

// service is the service r reports, its other fields normalized.
func (r *reportedService) service() (*agentService, error) {
	s := &agentService{ID: r.ID, Service: r.Service, Tags: r.Tags, Meta: r.Meta, Port: r.Port, Address: r.Address}
	// A plain service reports only what the agent fills in: nothing is
	// built for it (normalize would drop it all).
	var f map[string]any
	set := func(k string, v any) {
		if f == nil {
			f = map[string]any{}
		}
		f[k] = v
	}
	for _, kv := range [...]struct{ k, v string }{{"Kind", r.Kind}, {"SocketPath", r.SocketPath}, {"Namespace", r.Namespace}, {"Partition", r.Partition}} {
		if kv.v != "" {
			set(kv.k, kv.v)
		}
	}
	if r.EnableTagOverride {
		set("EnableTagOverride", true)
	}
	if w := r.Weights; w.Passing != 0 && (w.Passing != 1 || w.Warning != 1) {
		set("Weights", map[string]any{"Passing": w.Passing, "Warning": w.Warning})
	}
	if !r.derivedOnly() {
		var tagged map[string]struct {
			Address string
			Port    float64
		}
		if err := json.Unmarshal(r.TaggedAddresses, &tagged); err != nil {
			return nil, err
		}
		for k, a := range tagged {
			if derivedAddress(k, map[string]any{"Address": a.Address, "Port": a.Port}, r.Address, r.Port) {
				continue
			}
			ta, _ := f["TaggedAddresses"].(map[string]any)
			if ta == nil {
				ta = map[string]any{}
				set("TaggedAddresses", ta)
			}
			ta[k] = map[string]any{"Address": a.Address, "Port": a.Port}
		}
	}
	for _, kv := range [...]struct {
		k   string
		raw json.RawMessage
	}{{"Proxy", r.Proxy}, {"Connect", r.Connect}} {
		if raw := kv.raw; len(raw) > 0 && string(raw) != "null" && string(raw) != "{}" {
			var v any
			if err := json.Unmarshal(raw, &v); err != nil {
				return nil, err
			}
			set(kv.k, v)
		}
	}
	if f != nil {
		s.Fields = normalize(f, s.Address, s.Port)
	}
	return s, nil
}

// derivedOnly says whether r reports no tagged addresses, or only those
// the agent derives (derivedAddress) as it writes them, keys sorted (and
// indented by a dev agent): most services, whose answer is then compared
// as bytes, not decoded.
func (r *reportedService) derivedOnly() bool {
	var compact [512]byte
	raw := compact[:0]
	quoted := false
	for i, c := range r.TaggedAddresses {
		switch {
		case len(raw) == len(compact):
			return false // longer than the derived two
		case c == '"' && (i == 0 || r.TaggedAddresses[i-1] != '\\'):
			quoted = !quoted
		case !quoted && (c == ' ' || c == '\n' || c == '\t' || c == '\r'):
			continue
		}
		raw = append(raw, c)
	}
	if len(raw) == 0 || string(raw) == "null" || string(raw) == "{}" {
		return true
	}
	var buf [128]byte
	at := strconv.AppendQuote(append(buf[:0], `{"Address":`...), r.Address)
	at = append(strconv.AppendInt(append(at, `,"Port":`...), int64(r.Port), 10), '}')
	for _, v := range [...]string{"ipv4", "ipv6"} {
		rest, ok := raw, true
		for _, part := range [...][]byte{[]byte(`{"lan_` + v + `":`), at, []byte(`,"wan_` + v + `":`), at, []byte(`}`)} {
			if rest, ok = bytes.CutPrefix(rest, part); !ok {
				break
			}
		}
		if ok && len(rest) == 0 {
			return true
		}
	}
	return false
}

// services are the services of an answer of GET /v1/agent/services, by
// ID.
func services(reported map[string]*reportedService) (map[string]*agentService, error) {
	out := make(map[string]*agentService, len(reported))
	for id, r := range reported {
		s, err := r.service()
		if err != nil {
			return nil, fmt.Errorf("service %q: %w", id, err)
		}
		out[id] = s
	}
	return out, nil
}

// defaultWeights are the weights the agent gives a registration without
// any.
var defaultWeights = map[string]any{"Passing": 1.0, "Warning": 1.0}

// filled are the values the agent fills in for fields a registration
// leaves out, which a registration may also send as they are: a field
// declared in part keeps the rest of these (the derived tagged addresses,
// which the agent derives again when the address changes, are not).
var filled = map[string]any{"Weights": defaultWeights}

// derivedAddress says whether the tagged address k, at is, is one the
// agent makes itself: those it derives from the service's address and
// port when a registration gives none of that name (Consul 1.15's
// agent.go, addServiceInternal: lan_ipv4 and wan_ipv4, or _ipv6), and the
// virtual IP a proxy gets in the catalog (consul-virtual).
func derivedAddress(k string, at any, address string, port int) bool {
	return k == "consul-virtual" ||
		slices.Contains([]string{"lan_ipv4", "wan_ipv4", "lan_ipv6", "wan_ipv6"}, k) && reflect.DeepEqual(at, map[string]any{"Address": address, "Port": float64(port)})
}

// normalize is a registration's other fields less what the agent fills
// in itself when a registration leaves it out: the default weights, the
// tagged addresses it derives, the proxy settings it adds, false, "" and
// empty objects. What is left is what a person or a tool set, which an
// update keeps, and a plain service has none: its snapshot is as it was
// before these fields were read.
func normalize(f map[string]any, address string, port int) map[string]any {
	if reflect.DeepEqual(f["Weights"], defaultWeights) {
		delete(f, "Weights")
	}
	if ta, ok := f["TaggedAddresses"].(map[string]any); ok {
		maps.DeleteFunc(ta, func(k string, at any) bool { return derivedAddress(k, at, address, port) })
	}
	if p, ok := f["Proxy"].(map[string]any); ok {
		f["Proxy"] = underived(p)
	}
	for k, v := range f {
		if empty(v) {
			delete(f, k)
		}
	}
	if len(f) == 0 {
		return nil
	}
	return f
}

// underived is a proxy's settings less what the agent adds to them
// itself, which no registration may carry: the wildcard upstream ("*")
// of a transparent proxy (a registration with one is refused: "upstream
// destination name cannot be a wildcard"), and the paths it exposes for
// its checks (ParsedFromCheck) when expose.checks is true; and what it
// copies, which a registration need not carry: the proxy's mesh_gateway
// mode, which it writes into each upstream that names none (Consul
// 1.15, seen on a real agent in TestTakeOverCorpus's entry c61).
func underived(p map[string]any) map[string]any {
	p = maps.Clone(p)
	if ups, ok := p["Upstreams"].([]any); ok {
		ups = slices.DeleteFunc(slices.Clone(ups), func(u any) bool { return asObject(u)["DestinationName"] == "*" })
		for i, u := range ups {
			if up := asObject(u); up["MeshGateway"] != nil && reflect.DeepEqual(up["MeshGateway"], p["MeshGateway"]) {
				up = maps.Clone(up)
				delete(up, "MeshGateway")
				ups[i] = up
			}
		}
		p["Upstreams"] = ups
	}
	if ex, ok := p["Expose"].(map[string]any); ok {
		if paths, ok := ex["Paths"].([]any); ok {
			ex = maps.Clone(ex)
			ex["Paths"] = slices.DeleteFunc(slices.Clone(paths), func(x any) bool { return asObject(x)["ParsedFromCheck"] == true })
			p["Expose"] = ex
		}
	}
	return p
}

// empty is a value the agent reports for a field nobody set.
func empty(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case string:
		return v == ""
	case bool:
		return !v
	case float64:
		return v == 0
	case map[string]any:
		return len(v) == 0
	case []any:
		return len(v) == 0
	}
	return false
}

// withDefaults is a live service's other fields with what normalize left
// out put back, for comparing declared values with them.
func withDefaults(l *agentService) map[string]any {
	f := maps.Clone(l.Fields)
	if f == nil {
		f = map[string]any{}
	}
	for k, v := range filled {
		if f[k] == nil {
			f[k] = v
		}
	}
	if p, ok := f["Proxy"].(map[string]any); ok && p["MeshGateway"] != nil {
		f["Proxy"] = inheritedMode(p)
	}
	if ip := net.ParseIP(l.Address); ip != nil {
		ta, _ := f["TaggedAddresses"].(map[string]any)
		ta = maps.Clone(ta)
		if ta == nil {
			ta = map[string]any{}
		}
		family := "_ipv4"
		if ip.To4() == nil {
			family = "_ipv6"
		}
		for _, k := range []string{"lan" + family, "wan" + family} {
			if ta[k] == nil {
				ta[k] = map[string]any{"Address": l.Address, "Port": float64(l.Port)}
			}
		}
		f["TaggedAddresses"] = ta
	}
	return f
}

// inheritedMode is the proxy's settings p with its mesh_gateway mode in
// each upstream that names none, as the agent reports them (underived
// takes it out).
func inheritedMode(p map[string]any) map[string]any {
	ups, ok := p["Upstreams"].([]any)
	if !ok {
		return p
	}
	p, ups = maps.Clone(p), slices.Clone(ups)
	for i, u := range ups {
		if up := asObject(u); up != nil && up["MeshGateway"] == nil {
			up = maps.Clone(up)
			up["MeshGateway"] = p["MeshGateway"]
			ups[i] = up
		}
	}
	p["Upstreams"] = ups
	return p
}

// covers says whether the live value has every part the declared one
// has: equal scalars, lists of the same length whose elements each cover
// the declared one's, objects with every declared key covered. What the
// declaration leaves out is the agent's to fill in (a default) or a
// person's to set (kept).
func covers(live, declared any) bool {
	switch d := declared.(type) {
	case map[string]any:
		l, ok := live.(map[string]any)
		if !ok && live == nil {
			// The agent reports nothing of an object whose values are
			// all empty (connect = { native = false }).
			return empty(pruneEmpty(d))
		}
		if !ok {
			return false
		}
		for k, v := range d {
			if !covers(l[k], v) {
				return false
			}
		}
		return true
	case []any:
		l, ok := live.([]any)
		if !ok || len(l) != len(d) {
			return len(d) == 0 && live == nil
		}
		for i := range d {
			if !covers(l[i], d[i]) {
				return false
			}
		}
		return true
	}
	if live == nil {
		return empty(declared)
	}
	return reflect.DeepEqual(live, declared)
}

// merged is the live fields with the declared ones over them: an object
// declared in part keeps the live values of the rest; a list or a scalar
// is the declared one.
func merged(live, declared map[string]any) map[string]any {
	out := maps.Clone(live)
	if out == nil {
		out = map[string]any{}
	}
	for k, d := range declared {
		lm, lok := out[k].(map[string]any)
		dm, dok := d.(map[string]any)
		if lok && dok {
			out[k] = merged(lm, dm)
			continue
		}
		out[k] = d
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// argNames are the names in a spec of the fields of args whose values
// differ between have and want (by wire name), in the order of args.
func argNames(args []schema.Arg, differ func(wire string) bool) []string {
	var out []string
	for _, a := range args {
		if differ(a.Wire) {
			out = append(out, a.Name)
		}
	}
	return out
}

// asObject is v when it is an object, else nil.
func asObject(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}
