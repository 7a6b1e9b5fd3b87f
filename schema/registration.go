package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math/big"
	"net"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"
)

// ArgType is how a field of a registration is written in a spec and
// sent on the wire.
type ArgType int

const (
	String    ArgType = iota
	Int               // a whole number
	Bool              //
	Duration          // a Go duration string, "10s"
	Strings           // a list of strings
	StringMap         // a map of strings
	Headers           // a map of lists of strings: an HTTP check's header
	Any               // any value, sent as written: a proxy's opaque config
	Object            // an object of Args: an attribute, or one block
	Objects           // a list of objects of Args: a list, or repeated blocks
	ObjectMap         // a map of objects of Fields, keyed by name
)

// Arg is one field of Consul's service registration: its name in a spec
// (Consul's own service-definition files' name, snake_case) and on the
// wire (the JSON of PUT /v1/agent/service/register, as Consul's
// api/agent.go declares it). One table of them drives the schema of the
// block, its decoding and checks, the request body, the comparison with
// what the agent reports, the generated block and pull.
type Arg struct {
	Name string
	Wire string
	Type ArgType
	Args []Arg // of an Object, Objects or ObjectMap
	// Block is the type of a labelled block that writes one element of
	// an Objects field, the label its Name: a sidecar's checks are also
	// check "name" { ... } blocks, as a service's are.
	Block string
	// Enterprise is a field only Consul Enterprise takes: an open-source
	// agent refuses the whole registration ("unknown field").
	Enterprise bool
}

// enterprise are the fields of Consul Enterprise's admin partitions and
// namespaces, which every level of a registration may carry.
var enterprise = []Arg{{Name: "namespace", Wire: "Namespace", Enterprise: true}, {Name: "partition", Wire: "Partition", Enterprise: true}}

var meshGatewayFields = []Arg{{Name: "mode", Wire: "Mode"}}

// upstreamFields are a proxy's upstreams (Consul's api.Upstream).
var upstreamFields = []Arg{
	{Name: "destination_type", Wire: "DestinationType"},
	{Name: "destination_name", Wire: "DestinationName"},
	{Name: "destination_peer", Wire: "DestinationPeer"},
	{Name: "datacenter", Wire: "Datacenter"},
	{Name: "local_bind_address", Wire: "LocalBindAddress"},
	{Name: "local_bind_port", Wire: "LocalBindPort", Type: Int},
	{Name: "local_bind_socket_path", Wire: "LocalBindSocketPath"},
	{Name: "local_bind_socket_mode", Wire: "LocalBindSocketMode"},
	{Name: "config", Wire: "Config", Type: Any},
	{Name: "mesh_gateway", Wire: "MeshGateway", Type: Object, Args: meshGatewayFields},
	// An open-source agent takes these and reports "default" for a
	// wildcard upstream.
	{Name: "destination_namespace", Wire: "DestinationNamespace"},
	{Name: "destination_partition", Wire: "DestinationPartition"},
}

// proxyFields are a connect proxy's settings (Consul 1.15's
// api.AgentServiceConnectProxyConfig).
var proxyFields = []Arg{
	{Name: "destination_service_name", Wire: "DestinationServiceName"},
	{Name: "destination_service_id", Wire: "DestinationServiceID"},
	{Name: "local_service_address", Wire: "LocalServiceAddress"},
	{Name: "local_service_port", Wire: "LocalServicePort", Type: Int},
	{Name: "local_service_socket_path", Wire: "LocalServiceSocketPath"},
	{Name: "mode", Wire: "Mode"},
	{Name: "transparent_proxy", Wire: "TransparentProxy", Type: Object, Args: []Arg{
		{Name: "outbound_listener_port", Wire: "OutboundListenerPort", Type: Int},
		{Name: "dialed_directly", Wire: "DialedDirectly", Type: Bool},
	}},
	{Name: "config", Wire: "Config", Type: Any},
	{Name: "upstreams", Wire: "Upstreams", Type: Objects, Args: upstreamFields},
	{Name: "mesh_gateway", Wire: "MeshGateway", Type: Object, Args: meshGatewayFields},
	{Name: "expose", Wire: "Expose", Type: Object, Args: []Arg{
		{Name: "checks", Wire: "Checks", Type: Bool},
		{Name: "paths", Wire: "Paths", Type: Objects, Args: []Arg{
			{Name: "listener_port", Wire: "ListenerPort", Type: Int},
			{Name: "path", Wire: "Path"},
			{Name: "local_path_port", Wire: "LocalPathPort", Type: Int},
			{Name: "protocol", Wire: "Protocol"},
		}},
	}},
	{Name: "access_logs", Wire: "AccessLogs", Type: Object, Args: []Arg{
		{Name: "enabled", Wire: "Enabled", Type: Bool},
		{Name: "disable_listener_logs", Wire: "DisableListenerLogs", Type: Bool},
		{Name: "type", Wire: "Type"},
		{Name: "path", Wire: "Path"},
		{Name: "json_format", Wire: "JSONFormat"},
		{Name: "text_format", Wire: "TextFormat"},
	}},
	{Name: "envoy_extensions", Wire: "EnvoyExtensions", Type: Objects, Args: []Arg{
		{Name: "name", Wire: "Name"},
		{Name: "required", Wire: "Required", Type: Bool},
		{Name: "arguments", Wire: "Arguments", Type: Any},
	}},
}

// CheckFields are a health check's (Consul 1.15's api.AgentServiceCheck,
// less its name, which is the check block's label). Their order is the
// order on the wire: a check of http or tcp, interval and timeout is sent
// as before these fields existed, and the digest of the declared checks
// (which the meta carries) stays the same.
var CheckFields = []Arg{
	{Name: "http", Wire: "HTTP"},
	{Name: "tcp", Wire: "TCP"},
	{Name: "interval", Wire: "Interval", Type: Duration},
	{Name: "timeout", Wire: "Timeout", Type: Duration},
	{Name: "udp", Wire: "UDP"},
	{Name: "ttl", Wire: "TTL", Type: Duration},
	{Name: "grpc", Wire: "GRPC"},
	{Name: "grpc_use_tls", Wire: "GRPCUseTLS", Type: Bool},
	{Name: "h2ping", Wire: "H2PING"},
	{Name: "h2ping_use_tls", Wire: "H2PingUseTLS", Type: Bool},
	{Name: "alias_service", Wire: "AliasService"},
	{Name: "alias_node", Wire: "AliasNode"},
	{Name: "args", Wire: "Args", Type: Strings},
	// script_args is the agent's older name of args, which its own
	// definitions still take (Consul 1.15's agent/config: ScriptArgs).
	{Name: "script_args", Wire: "Args", Type: Strings},
	{Name: "docker_container_id", Wire: "DockerContainerID"},
	{Name: "shell", Wire: "Shell"},
	{Name: "method", Wire: "Method"},
	{Name: "header", Wire: "Header", Type: Headers},
	{Name: "body", Wire: "Body"},
	{Name: "disable_redirects", Wire: "DisableRedirects", Type: Bool},
	{Name: "tls_server_name", Wire: "TLSServerName"},
	{Name: "tls_skip_verify", Wire: "TLSSkipVerify", Type: Bool},
	{Name: "notes", Wire: "Notes"},
	{Name: "status", Wire: "Status"},
	{Name: "success_before_passing", Wire: "SuccessBeforePassing", Type: Int},
	{Name: "failures_before_warning", Wire: "FailuresBeforeWarning", Type: Int},
	{Name: "failures_before_critical", Wire: "FailuresBeforeCritical", Type: Int},
	{Name: "deregister_critical_service_after", Wire: "DeregisterCriticalServiceAfter", Type: Duration},
	{Name: "output_max_size", Wire: "OutputMaxSize", Type: Int},
	{Name: "check_id", Wire: "CheckID"},
	enterprise[0], enterprise[1],
}

// checkTypes are the fields that give a check its type, as the agent
// reports it (GET /v1/agent/checks's Type), and whether the type runs on
// an interval.
var checkTypes = []struct {
	field, typ string
	interval   bool
}{
	{"HTTP", "http", true}, {"TCP", "tcp", true}, {"UDP", "udp", true}, {"TTL", "ttl", false},
	{"GRPC", "grpc", true}, {"H2PING", "h2ping", true}, {"AliasService", "alias", false}, {"AliasNode", "alias", false},
	{"DockerContainerID", "docker", true}, {"Args", "script", true},
}

// CheckType is the type the agent reports for a check of these wire
// fields ("http", "ttl", ...); "" when none gives it one.
func CheckType(def map[string]any) string {
	for _, t := range checkTypes {
		if _, ok := def[t.field]; ok {
			return t.typ
		}
	}
	return ""
}

// taggedAddressesArg and weightsArg are fields of a registration and of
// its sidecar's alike.
var (
	taggedAddressesArg = Arg{Name: "tagged_addresses", Wire: "TaggedAddresses", Type: ObjectMap, Args: []Arg{
		{Name: "address", Wire: "Address"}, {Name: "port", Wire: "Port", Type: Int},
	}}
	weightsArg = Arg{Name: "weights", Wire: "Weights", Type: Object, Args: []Arg{
		{Name: "passing", Wire: "Passing", Type: Int}, {Name: "warning", Wire: "Warning", Type: Int},
	}}
)

// RegistrationFields are what a service block declares of Consul's
// registration beyond its ID, name, address, port, tags, meta and checks,
// which the block's own attributes and check blocks give.
var RegistrationFields = []Arg{
	{Name: "kind", Wire: "Kind"},
	{Name: "socket_path", Wire: "SocketPath"},
	taggedAddressesArg, weightsArg,
	{Name: "enable_tag_override", Wire: "EnableTagOverride", Type: Bool},
	{Name: "proxy", Wire: "Proxy", Type: Object, Args: proxyFields},
	{Name: "connect", Wire: "Connect", Type: Object, Args: []Arg{
		{Name: "native", Wire: "Native", Type: Bool},
		{Name: "sidecar_service", Wire: "SidecarService", Type: Object, Args: sidecarFields},
	}},
	enterprise[0], enterprise[1],
}

// sidecarFields are what connect's sidecar_service may set of the
// sidecar the agent registers with the service (Consul's
// agent/sidecar_service.go fills in the rest from its parent).
var sidecarFields = []Arg{
	{Name: "kind", Wire: "Kind"},
	{Name: "id", Wire: "ID"},
	{Name: "name", Wire: "Name"},
	{Name: "port", Wire: "Port", Type: Int},
	{Name: "address", Wire: "Address"},
	{Name: "socket_path", Wire: "SocketPath"},
	{Name: "tags", Wire: "Tags", Type: Strings},
	{Name: "meta", Wire: "Meta", Type: StringMap},
	taggedAddressesArg, weightsArg,
	{Name: "enable_tag_override", Wire: "EnableTagOverride", Type: Bool},
	{Name: "proxy", Wire: "Proxy", Type: Object, Args: proxyFields},
	{Name: "checks", Wire: "Checks", Type: Objects, Args: append([]Arg{{Name: "name", Wire: "Name"}}, CheckFields...), Block: "check"},
}

// ArgWired is the field of fields with that wire name.
func ArgWired(fields []Arg, wire string) (Arg, bool) {
	i := slices.IndexFunc(fields, func(f Arg) bool { return f.Wire == wire })
	if i < 0 {
		return Arg{}, false
	}
	return fields[i], true
}

// nests says whether a field may be written as a block.
func (f Arg) nests() bool { return f.Type == Object || f.Type == Objects || f.Type == ObjectMap }

// argsSchema is the body schema of fields: each as an attribute, and
// those that nest also as blocks.
func argsSchema(fields []Arg) *hcl.BodySchema {
	s := &hcl.BodySchema{}
	for _, f := range fields {
		s.Attributes = append(s.Attributes, hcl.AttributeSchema{Name: f.Name})
		if f.nests() {
			s.Blocks = append(s.Blocks, hcl.BlockHeaderSchema{Type: f.Name})
		}
		if f.Block != "" {
			s.Blocks = append(s.Blocks, hcl.BlockHeaderSchema{Type: f.Block, LabelNames: []string{"name"}})
		}
	}
	return s
}

// with is the body schema s with the fields' attributes and blocks added.
func with(s *hcl.BodySchema, fields []Arg) *hcl.BodySchema {
	fs := argsSchema(fields)
	return &hcl.BodySchema{Attributes: append(slices.Clone(s.Attributes), fs.Attributes...), Blocks: append(slices.Clone(s.Blocks), fs.Blocks...)}
}

// fields decodes the fields of c, a body's content under a schema that
// with added them to, into their wire form: each written as an attribute
// or, those that nest, as blocks. An Enterprise field is refused at its
// line.
func (d *decoder) args(fields []Arg, c *hcl.BodyContent, path string) map[string]any {
	out := map[string]any{}
	for _, f := range fields {
		at := path + f.Name
		attr, isAttr := c.Attributes[f.Name]
		blocks := c.Blocks.OfType(f.Name)
		_, twice := out[f.Wire]
		switch {
		case twice && isAttr:
			first, _ := ArgWired(fields, f.Wire)
			d.errorf(attr.Range, attr.Range, "Duplicate "+f.Name, "%s is %s under another name, which is set too: write one of them.", at, path+first.Name)
		case isAttr && len(blocks) > 0:
			d.errorf(blocks[0].DefRange, attr.Range, "Duplicate "+f.Name, "%s is set both as an argument (at %s) and as a block: write it once.", at, attr.Range)
		case f.Enterprise && (isAttr || len(blocks) > 0):
			rng := attr.Range
			if !isAttr {
				rng = blocks[0].DefRange
			}
			d.errorf(rng, rng, "Consul Enterprise only", "%s exists in Consul Enterprise only: an open-source agent refuses the whole registration (\"unknown field\"). Leave it out.", at)
		case isAttr:
			v, ok := d.eval(attr.Expr)
			if !ok || v.IsNull() {
				continue
			}
			v, _ = v.Unmark()
			d.keyAttr, d.keyAt = attr.Expr, at
			if w, ok := d.argValue(f, v, attr.Expr.Range(), at); ok {
				out[f.Wire] = w
			}
			d.keyAttr, d.keyRanges = nil, nil
		case len(blocks) > 0:
			if w, ok := d.fieldBlocks(f, blocks, at); ok {
				out[f.Wire] = w
			}
		}
		if f.Block != "" {
			d.labelledBlocks(f, c.Blocks.OfType(f.Block), attr, blocks, at, out)
		}
	}
	return out
}

// labelledBlocks adds the elements of the Objects field f written as
// labelled blocks (check "name" { ... }) to out, each with its label as
// its Name; written beside the field's list (attr) or its unlabelled
// blocks (others), they are refused.
func (d *decoder) labelledBlocks(f Arg, labelled hcl.Blocks, attr *hcl.Attribute, others hcl.Blocks, at string, out map[string]any) {
	if len(labelled) == 0 {
		return
	}
	if attr != nil || len(others) > 0 {
		d.errorf(labelled[0].DefRange, labelled[0].DefRange, "Duplicate "+f.Name, "%s is written both as %s blocks and as %s: write one of them.", at, f.Block, f.Name)
		return
	}
	list := []any{}
	for _, b := range labelled {
		el := d.args(f.Args, d.content(b.Body, argsSchema(f.Args)), at+"."+b.Labels[0]+".")
		el["Name"] = b.Labels[0]
		d.checkChecks([]any{el}, b.DefRange)
		list = append(list, el)
	}
	out[f.Wire] = list
}

// checkChecks checks each check of list (a sidecar's, by wire name, its
// name among them), written at rng, as a service's check blocks are.
func (d *decoder) checkChecks(list any, rng hcl.Range) {
	checks, _ := list.([]any)
	for _, c := range checks {
		def, _ := c.(map[string]any)
		name, _ := def["Name"].(string)
		d.checkCheck(&Check{Name: name, Def: def}, rng)
	}
}

// fieldBlocks decodes a nesting field written as blocks: one for an
// Object, any number for Objects, and for an ObjectMap one block whose
// arguments are its keys.
func (d *decoder) fieldBlocks(f Arg, blocks hcl.Blocks, at string) (any, bool) {
	switch f.Type {
	case Objects:
		var out []any
		for _, b := range blocks {
			el := d.args(f.Args, d.content(b.Body, argsSchema(f.Args)), at+".")
			if f.Block == "check" {
				d.checkChecks([]any{el}, b.DefRange)
			}
			out = append(out, el)
		}
		return out, true
	case ObjectMap:
		if len(blocks) > 1 {
			d.diags = append(d.diags, duplicate("Duplicate "+f.Name+" block", f.Name+" block", blocks[1].DefRange, blocks[0].DefRange))
		}
		attrs, diags := blocks[0].Body.JustAttributes()
		d.diags = append(d.diags, diags...)
		out := map[string]any{}
		for name, attr := range attrs {
			v, ok := d.eval(attr.Expr)
			if !ok || v.IsNull() {
				continue
			}
			v, _ = v.Unmark()
			if w, ok := d.argValue(Arg{Name: f.Name, Type: Object, Args: f.Args}, v, attr.Expr.Range(), at+"."+name); ok {
				out[name] = w
			}
		}
		return out, true
	}
	if len(blocks) > 1 {
		d.diags = append(d.diags, duplicate("Duplicate "+f.Name+" block", f.Name+" block", blocks[1].DefRange, blocks[0].DefRange))
	}
	return d.args(f.Args, d.content(blocks[0].Body, argsSchema(f.Args)), at+"."), true
}

// fieldValue converts v, written at rng, to f's wire form; false when it
// does not fit (the diagnostic says why).
func (d *decoder) argValue(f Arg, v cty.Value, rng hcl.Range, at string) (any, bool) {
	bad := func(want string) (any, bool) {
		d.errorf(d.keyRange(rng, at), rng, "Invalid "+f.Name, "%s is %s; got %s.", at, want, typeName(v))
		return nil, false
	}
	if !v.IsWhollyKnown() {
		return nil, false
	}
	ty := v.Type()
	switch f.Type {
	case String, Duration:
		s, err := toType(v, cty.String)
		if err != nil {
			return bad("a string")
		}
		if f.Type == Duration {
			if dur, err := time.ParseDuration(s.AsString()); err != nil || dur <= 0 {
				d.errorf(d.keyRange(rng, at), rng, "Invalid duration", "%q is not a positive duration such as \"10s\" or \"1m30s\".", s.AsString())
				return nil, false
			}
		}
		return s.AsString(), true
	case Int:
		n, err := toType(v, cty.Number)
		if err != nil {
			return bad("a whole number")
		}
		i, acc := n.AsBigFloat().Int64()
		if acc != big.Exact {
			return bad("a whole number")
		}
		return float64(i), true
	case Bool:
		b, err := toType(v, cty.Bool)
		if err != nil {
			return bad("true or false")
		}
		return b.True(), true
	case Strings:
		l, err := toType(v, cty.List(cty.String))
		if err != nil || slices.ContainsFunc(l.AsValueSlice(), cty.Value.IsNull) {
			return bad("a list of strings")
		}
		out := []any{}
		for _, e := range l.AsValueSlice() {
			out = append(out, e.AsString())
		}
		return out, true
	case StringMap:
		m, err := toType(v, cty.Map(cty.String))
		if err != nil {
			return bad("a map of strings")
		}
		out := map[string]any{}
		for k, e := range m.AsValueMap() {
			if e.IsNull() {
				return bad("a map of strings")
			}
			out[k] = e.AsString()
		}
		return out, true
	case Headers:
		m, err := toType(v, cty.Map(cty.List(cty.String)))
		if err != nil {
			return bad("a map of lists of strings, such as { X-Probe = [\"1\"] }")
		}
		out := map[string]any{}
		for k, e := range m.AsValueMap() {
			if SensitiveKey.MatchString(k) {
				d.errorf(d.keyRange(rng, at), rng, "Credentials in a spec", "%s names the header %q, a credential: specs are committed and plans are shared. Give the check its credentials another way (a file or a local endpoint that needs none).", at, k)
				return nil, false
			}
			vals := []any{}
			for _, x := range e.AsValueSlice() {
				vals = append(vals, x.AsString())
			}
			out[k] = vals
		}
		return out, true
	case Any:
		b, err := ctyjson.Marshal(v, ty)
		if err != nil {
			return bad("a value JSON can carry")
		}
		var out any
		_ = json.Unmarshal(b, &out)
		return out, true
	case Objects:
		if !ty.IsListType() && !ty.IsTupleType() && !ty.IsSetType() {
			return bad("a list of objects")
		}
		out := []any{}
		for i, e := range v.AsValueSlice() {
			w, ok := d.argValue(Arg{Name: f.Name, Type: Object, Args: f.Args}, e, rng, fmt.Sprintf("%s[%d]", at, i))
			if !ok {
				return nil, false
			}
			out = append(out, w)
		}
		if f.Block == "check" {
			d.checkChecks(out, d.keyRange(rng, at))
		}
		return out, true
	case ObjectMap:
		if !ty.IsObjectType() && !ty.IsMapType() {
			return bad("a map of objects")
		}
		out := map[string]any{}
		for k, e := range v.AsValueMap() {
			w, ok := d.argValue(Arg{Name: f.Name, Type: Object, Args: f.Args}, e, rng, at+"."+k)
			if !ok {
				return nil, false
			}
			out[k] = w
		}
		return out, true
	}
	// Object
	if !ty.IsObjectType() && !ty.IsMapType() {
		return bad("an object")
	}
	out := map[string]any{}
	for k, e := range v.AsValueMap() {
		sub, ok := argNamed(f.Args, k)
		switch {
		case !ok:
			d.errorf(d.keyRange(rng, at+"."+k), rng, "Unsupported argument", "%s has no %q: it takes %s.%s", at, k, names(f.Args), suggest(k, argNames(f.Args)))
			return nil, false
		case sub.Enterprise:
			d.errorf(d.keyRange(rng, at+"."+k), rng, "Consul Enterprise only", "%s.%s exists in Consul Enterprise only: an open-source agent refuses the whole registration (\"unknown field\"). Leave it out.", at, k)
			return nil, false
		case e.IsNull():
			continue
		}
		w, ok := d.argValue(sub, e, rng, at+"."+k)
		if !ok {
			return nil, false
		}
		out[sub.Wire] = w
	}
	return out, true
}

func argNamed(fields []Arg, name string) (Arg, bool) {
	i := slices.IndexFunc(fields, func(f Arg) bool { return f.Name == name })
	if i < 0 {
		return Arg{}, false
	}
	return fields[i], true
}

// keyRange is where the value at (connect.sidecar_service.kind) is
// written in the object attribute being decoded: its key and value; rng
// when it is not written there (a computed value). The ranges are found
// once, when a diagnostic first asks: most attributes have none.
func (d *decoder) keyRange(rng hcl.Range, at string) hcl.Range {
	if d.keyAttr == nil {
		return rng
	}
	if d.keyRanges == nil {
		d.keyRanges = nestedKeyRanges(d.keyAttr, d.ctx, d.keyAt, true)
	}
	if r, ok := d.keyRanges[at]; ok {
		return r
	}
	return rng
}

// argNames are the fields' names.
func argNames(fields []Arg) []string {
	out := make([]string, len(fields))
	for i, f := range fields {
		out[i] = f.Name
	}
	return out
}

// names lists the fields' names that a spec may write.
func names(fields []Arg) string {
	var out []string
	for _, f := range fields {
		if !f.Enterprise {
			out = append(out, f.Name)
		}
	}
	return strings.Join(out, ", ")
}

// serviceKinds are the kinds of service a Consul 1.15 agent registers
// ("" is a plain service).
var serviceKinds = []string{"", "connect-proxy", "mesh-gateway", "terminating-gateway", "ingress-gateway", "api-gateway"}

// checkStatuses are the statuses a check may start in.
var checkStatuses = []string{"passing", "warning", "critical"}

// UnnamedCheck says whether name is one Consul gives the checks a
// registration sends without an ID (service:<id>:1, :2, ...): a number.
// A check label may not be one, and a check whose ID ends so is not
// provision's.
func UnnamedCheck(name string) bool { return digitsOnly.MatchString(name) }

var digitsOnly = regexp.MustCompile(`^[0-9]+$`)

// checkRegistration refuses, at the block, what the agent would refuse
// of a registration's fields (Consul 1.15's agent/structs validation):
// an unknown kind, a connect proxy without a port or socket path or
// without its destination service, a mesh gateway without a port.
func (d *decoder) checkRegistration(s *Service, rng hcl.Range) {
	kind, _ := s.Fields["Kind"].(string)
	proxy, _ := s.Fields["Proxy"].(map[string]any)
	switch {
	case !slices.Contains(serviceKinds, kind):
		d.errorf(rng, rng, "Invalid kind", "kind %q is none of the kinds Consul registers: %s (or none, a plain service).%s", kind, strings.Join(serviceKinds[1:], ", "), onPurpose("the agent takes any kind, and no proxy or gateway serves an unknown one"))
	case kind == "connect-proxy" && s.Port == 0 && s.Fields["SocketPath"] == nil:
		d.errorf(rng, rng, "Connect proxy without a port", "A connect-proxy registration needs a port or a socket_path: the agent refuses it otherwise.")
	case kind == "connect-proxy" && proxy["DestinationServiceName"] == nil:
		d.errorf(rng, rng, "Connect proxy without a destination", "A connect-proxy registration needs proxy.destination_service_name, the service it proxies: the agent refuses it otherwise.")
	case kind == "mesh-gateway" && s.Port == 0:
		d.errorf(rng, rng, "Mesh gateway without a port", "A mesh-gateway registration needs a port: the agent refuses it otherwise.")
	case kind == "" && proxy != nil:
		d.errorf(rng, rng, "Proxy settings without a proxy kind", "proxy is the settings of a connect-proxy or a gateway: set kind, or move the settings into connect { sidecar_service { proxy { ... } } }.")
	case unspecified(s.Address):
		d.errorf(rng, rng, "Invalid service address", "address %q is the unspecified address, which the agent refuses (\"Invalid service address\"): a registration says where the service is reached. Give its IP or host name, or leave address out for the agent's own.", s.Address)
	}
	if sc := SidecarOf(s.Fields); sc != nil {
		if k, _ := sc["Kind"].(string); k != "" && k != "connect-proxy" {
			d.errorf(rng, rng, "Invalid sidecar kind", "sidecar_service's kind %q is refused by the agent: it registers every sidecar as a connect-proxy. Leave kind out, or write \"connect-proxy\".", k)
		}
	}
}

// onPurpose is what a diagnostic adds when provision refuses on purpose
// what the agent would take: why.
func onPurpose(why string) string {
	return " The agent itself would take it; provision refuses it on purpose: " + why + "."
}

// twoTypes is onPurpose's words for a check of more than one type; ""
// for none.
func twoTypes(types []string) string {
	if len(types) < 2 {
		return ""
	}
	return onPurpose("the agent takes two, runs one of them and drops the other without a word")
}

// SidecarOf is the sidecar_service that a registration's fields declare;
// nil for none.
func SidecarOf(fields map[string]any) map[string]any {
	c, _ := fields["Connect"].(map[string]any)
	sc, _ := c["SidecarService"].(map[string]any)
	return sc
}

// unspecified says whether address is the unspecified IPv4 or IPv6
// address (0.0.0.0, ::), which the agent refuses as a service's.
func unspecified(address string) bool {
	ip := net.ParseIP(strings.Trim(address, "[]"))
	return ip != nil && ip.IsUnspecified()
}

// checkCheck refuses, at the check block, what the agent would refuse of
// a check: none or two of the fields that give it a type, no interval
// where the type runs on one, an initial status none of Consul's, a
// label that would take the ID Consul gives unnamed checks.
func (d *decoder) checkCheck(ch *Check, rng hcl.Range) {
	var types []string
	needsInterval := false
	for _, t := range checkTypes {
		if t.typ == "script" && ch.Def["DockerContainerID"] != nil {
			continue // a docker check's args are its command in the container
		}
		if _, ok := ch.Def[t.field]; ok && !slices.Contains(types, t.typ) {
			types = append(types, t.typ)
			needsInterval = t.interval
		}
	}
	status, hasStatus := ch.Def["Status"].(string)
	switch {
	case len(types) != 1:
		d.errorf(rng, rng, "Invalid check", "A check sets exactly one of http, tcp, udp, ttl, grpc, h2ping, alias_service (or alias_node), args (a script) or docker_container_id; this one sets %s.%s", orNone(types, "none"), twoTypes(types))
	case needsInterval && ch.Def["Interval"] == nil:
		d.errorf(rng, rng, "Check without an interval", "A %s check runs every interval: set interval, such as \"10s\".", types[0])
	case types[0] == "ttl" && ch.Def["Interval"] != nil:
		d.errorf(rng, rng, "Interval of a ttl check", "A ttl check does not run on an interval (the service passes it within its ttl), and the agent refuses both: leave interval out.")
	case hasStatus && !slices.Contains(checkStatuses, status):
		d.errorf(rng, rng, "Invalid check status", "status %q is none of Consul's: passing, warning or critical.", status)
	case ch.Def["CheckID"] == nil && UnnamedCheck(ch.Name):
		d.errorf(rng, rng, "Invalid check name", "A check named %q would take the ID that Consul gives checks registered without one (service:<id>:%s): give it a name with a letter, or a check_id.", ch.Name, ch.Name)
	case types[0] == "docker" && ch.Def["Args"] == nil && ch.Def["Shell"] == nil:
		d.errorf(rng, rng, "Docker check without a command", "A docker check runs args (or shell) in the container: set args.")
	}
}

// Wire writes m, a registration's fields by wire name, as the JSON
// object the agent takes: the keys of args first, in their order (their
// objects likewise), then any others sorted (a live value provision keeps
// as it is).
func Wire(args []Arg, m map[string]any) json.RawMessage {
	if len(m) == 0 {
		return json.RawMessage("{}") // a plain service's: most of a large plan's
	}
	var b bytes.Buffer
	b.WriteByte('{')
	first := true
	put := func(k string, v json.RawMessage) {
		if !first {
			b.WriteByte(',')
		}
		first = false
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		b.Write(v)
	}
	done := map[string]bool{}
	for _, a := range args {
		if v, ok := m[a.Wire]; ok && !done[a.Wire] {
			put(a.Wire, wireValue(a, v))
			done[a.Wire] = true
		}
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !done[k] {
			put(k, wireValue(Arg{Type: Any}, m[k]))
		}
	}
	b.WriteByte('}')
	return b.Bytes()
}

// wireValue writes one value of a, its objects in the order of a's args.
func wireValue(a Arg, v any) json.RawMessage {
	switch a.Type {
	case Object:
		if m, ok := v.(map[string]any); ok {
			return Wire(a.Args, m)
		}
	case Objects:
		if l, ok := v.([]any); ok {
			parts := make([][]byte, len(l))
			for i, e := range l {
				parts[i] = wireValue(Arg{Type: Object, Args: a.Args}, e)
			}
			return append(append([]byte{'['}, bytes.Join(parts, []byte{','})...), ']')
		}
	case ObjectMap:
		if m, ok := v.(map[string]any); ok {
			out := map[string]json.RawMessage{}
			for k, e := range m {
				out[k] = wireValue(Arg{Type: Object, Args: a.Args}, e)
			}
			b, _ := json.Marshal(out)
			return b
		}
	}
	b, _ := json.Marshal(v)
	return b
}

// SpecValue is v, a value of a in its wire form, as a spec writes it:
// objects with the names of a's args, their empty values left out; false
// when nothing is left. It is the inverse of the decoding: a generated
// block or a pulled value declares what is live.
func SpecValue(a Arg, v any) (cty.Value, bool) {
	switch a.Type {
	case String, Duration:
		if s, ok := v.(string); ok {
			return cty.StringVal(s), s != ""
		}
	case Int:
		if n, ok := v.(float64); ok {
			return cty.NumberIntVal(int64(n)), n != 0
		}
	case Bool:
		if b, ok := v.(bool); ok {
			return cty.BoolVal(b), b
		}
	case Object:
		m, ok := v.(map[string]any)
		if !ok {
			break
		}
		attrs := map[string]cty.Value{}
		for _, sub := range a.Args {
			if x, ok := m[sub.Wire]; ok {
				if cv, ok := SpecValue(sub, x); ok {
					attrs[sub.Name] = cv
				}
			}
		}
		return cty.ObjectVal(attrs), len(attrs) > 0
	case Objects:
		l, ok := v.([]any)
		if !ok {
			break
		}
		vals := make([]cty.Value, 0, len(l))
		for _, e := range l {
			cv, _ := SpecValue(Arg{Type: Object, Args: a.Args}, e)
			vals = append(vals, cv)
		}
		return cty.TupleVal(vals), len(vals) > 0
	case ObjectMap:
		m, ok := v.(map[string]any)
		if !ok {
			break
		}
		attrs := map[string]cty.Value{}
		for k, e := range m {
			if cv, ok := SpecValue(Arg{Type: Object, Args: a.Args}, e); ok {
				attrs[k] = cv
			}
		}
		return cty.ObjectVal(attrs), len(attrs) > 0
	}
	b, err := json.Marshal(v)
	if err != nil {
		return cty.NilVal, false
	}
	ty, err := ctyjson.ImpliedType(b)
	if err != nil {
		return cty.NilVal, false
	}
	cv, err := ctyjson.Unmarshal(b, ty)
	return cv, err == nil && !cv.IsNull() && (!cv.CanIterateElements() || cv.LengthInt() > 0)
}

// SpecJSON is v, a value of a in its wire form, with the names a spec
// gives its objects' keys (JSON-ready, as pull writes values).
func SpecJSON(a Arg, v any) any {
	switch a.Type {
	case Object:
		m, ok := v.(map[string]any)
		if !ok {
			return v
		}
		out := map[string]any{}
		for k, x := range m {
			if sub, ok := ArgWired(a.Args, k); ok {
				out[sub.Name] = SpecJSON(sub, x)
			} else {
				out[k] = x
			}
		}
		return out
	case Objects:
		l, ok := v.([]any)
		if !ok {
			return v
		}
		out := make([]any, len(l))
		for i, x := range l {
			out[i] = SpecJSON(Arg{Type: Object, Args: a.Args}, x)
		}
		return out
	case ObjectMap:
		m, ok := v.(map[string]any)
		if !ok {
			return v
		}
		out := map[string]any{}
		for k, x := range m {
			out[k] = SpecJSON(Arg{Type: Object, Args: a.Args}, x)
		}
		return out
	}
	return v
}
