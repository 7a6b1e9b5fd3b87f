package consul

import (
	"net"
	"regexp"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/schema"
)

// enterprise are the fields of Consul Enterprise's admin partitions and
// namespaces, which every level of a registration may carry.
var enterprise = []schema.Arg{{Name: "namespace", Wire: "Namespace", Enterprise: true}, {Name: "partition", Wire: "Partition", Enterprise: true}}

var meshGatewayFields = []schema.Arg{{Name: "mode", Wire: "Mode"}}

// upstreamFields are a proxy's upstreams (Consul's api.Upstream).
var upstreamFields = []schema.Arg{
	{Name: "destination_type", Wire: "DestinationType"},
	{Name: "destination_name", Wire: "DestinationName"},
	{Name: "destination_peer", Wire: "DestinationPeer"},
	{Name: "datacenter", Wire: "Datacenter"},
	{Name: "local_bind_address", Wire: "LocalBindAddress"},
	{Name: "local_bind_port", Wire: "LocalBindPort", Type: schema.Int},
	{Name: "local_bind_socket_path", Wire: "LocalBindSocketPath"},
	{Name: "local_bind_socket_mode", Wire: "LocalBindSocketMode"},
	{Name: "config", Wire: "Config", Type: schema.Any},
	{Name: "mesh_gateway", Wire: "MeshGateway", Type: schema.Object, Args: meshGatewayFields},
	// An open-source agent takes these and reports "default" for a
	// wildcard upstream.
	{Name: "destination_namespace", Wire: "DestinationNamespace"},
	{Name: "destination_partition", Wire: "DestinationPartition"},
}

// proxyFields are a connect proxy's settings (Consul 1.15's
// api.AgentServiceConnectProxyConfig).
var proxyFields = []schema.Arg{
	{Name: "destination_service_name", Wire: "DestinationServiceName"},
	{Name: "destination_service_id", Wire: "DestinationServiceID"},
	{Name: "local_service_address", Wire: "LocalServiceAddress"},
	{Name: "local_service_port", Wire: "LocalServicePort", Type: schema.Int},
	{Name: "local_service_socket_path", Wire: "LocalServiceSocketPath"},
	{Name: "mode", Wire: "Mode"},
	{Name: "transparent_proxy", Wire: "TransparentProxy", Type: schema.Object, Args: []schema.Arg{
		{Name: "outbound_listener_port", Wire: "OutboundListenerPort", Type: schema.Int},
		{Name: "dialed_directly", Wire: "DialedDirectly", Type: schema.Bool},
	}},
	{Name: "config", Wire: "Config", Type: schema.Any},
	{Name: "upstreams", Wire: "Upstreams", Type: schema.Objects, Args: upstreamFields},
	{Name: "mesh_gateway", Wire: "MeshGateway", Type: schema.Object, Args: meshGatewayFields},
	{Name: "expose", Wire: "Expose", Type: schema.Object, Args: []schema.Arg{
		{Name: "checks", Wire: "Checks", Type: schema.Bool},
		{Name: "paths", Wire: "Paths", Type: schema.Objects, Args: []schema.Arg{
			{Name: "listener_port", Wire: "ListenerPort", Type: schema.Int},
			{Name: "path", Wire: "Path"},
			{Name: "local_path_port", Wire: "LocalPathPort", Type: schema.Int},
			{Name: "protocol", Wire: "Protocol"},
		}},
	}},
	{Name: "access_logs", Wire: "AccessLogs", Type: schema.Object, Args: []schema.Arg{
		{Name: "enabled", Wire: "Enabled", Type: schema.Bool},
		{Name: "disable_listener_logs", Wire: "DisableListenerLogs", Type: schema.Bool},
		{Name: "type", Wire: "Type"},
		{Name: "path", Wire: "Path"},
		{Name: "json_format", Wire: "JSONFormat"},
		{Name: "text_format", Wire: "TextFormat"},
	}},
	{Name: "envoy_extensions", Wire: "EnvoyExtensions", Type: schema.Objects, Args: []schema.Arg{
		{Name: "name", Wire: "Name"},
		{Name: "required", Wire: "Required", Type: schema.Bool},
		{Name: "arguments", Wire: "Arguments", Type: schema.Any},
	}},
}

// CheckFields are a health check's (Consul 1.15's api.AgentServiceCheck,
// less its name, which is the check block's label). Their order is the
// order on the wire: a check of http or tcp, interval and timeout is sent
// as before these fields existed, and the digest of the declared checks
// (which the meta carries) stays the same.
var CheckFields = []schema.Arg{
	{Name: "http", Wire: "HTTP"},
	{Name: "tcp", Wire: "TCP"},
	{Name: "interval", Wire: "Interval", Type: schema.Duration},
	{Name: "timeout", Wire: "Timeout", Type: schema.Duration},
	{Name: "udp", Wire: "UDP"},
	{Name: "ttl", Wire: "TTL", Type: schema.Duration},
	{Name: "grpc", Wire: "GRPC"},
	{Name: "grpc_use_tls", Wire: "GRPCUseTLS", Type: schema.Bool},
	{Name: "h2ping", Wire: "H2PING"},
	{Name: "h2ping_use_tls", Wire: "H2PingUseTLS", Type: schema.Bool},
	{Name: "alias_service", Wire: "AliasService"},
	{Name: "alias_node", Wire: "AliasNode"},
	{Name: "args", Wire: "Args", Type: schema.Strings},
	// script_args is the agent's older name of args, which its own
	// definitions still take (Consul 1.15's agent/config: ScriptArgs).
	{Name: "script_args", Wire: "Args", Type: schema.Strings},
	{Name: "docker_container_id", Wire: "DockerContainerID"},
	{Name: "shell", Wire: "Shell"},
	{Name: "method", Wire: "Method"},
	{Name: "header", Wire: "Header", Type: schema.Headers},
	{Name: "body", Wire: "Body"},
	{Name: "disable_redirects", Wire: "DisableRedirects", Type: schema.Bool},
	{Name: "tls_server_name", Wire: "TLSServerName"},
	{Name: "tls_skip_verify", Wire: "TLSSkipVerify", Type: schema.Bool},
	{Name: "notes", Wire: "Notes"},
	{Name: "status", Wire: "Status"},
	{Name: "success_before_passing", Wire: "SuccessBeforePassing", Type: schema.Int},
	{Name: "failures_before_warning", Wire: "FailuresBeforeWarning", Type: schema.Int},
	{Name: "failures_before_critical", Wire: "FailuresBeforeCritical", Type: schema.Int},
	{Name: "deregister_critical_service_after", Wire: "DeregisterCriticalServiceAfter", Type: schema.Duration},
	{Name: "output_max_size", Wire: "OutputMaxSize", Type: schema.Int},
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
	taggedAddressesArg = schema.Arg{Name: "tagged_addresses", Wire: "TaggedAddresses", Type: schema.ObjectMap, Args: []schema.Arg{
		{Name: "address", Wire: "Address"}, {Name: "port", Wire: "Port", Type: schema.Int},
	}}
	weightsArg = schema.Arg{Name: "weights", Wire: "Weights", Type: schema.Object, Args: []schema.Arg{
		{Name: "passing", Wire: "Passing", Type: schema.Int}, {Name: "warning", Wire: "Warning", Type: schema.Int},
	}}
)

// RegistrationFields are what a service block declares of Consul's
// registration beyond its ID, name, address, port, tags, meta and checks,
// which the block's own attributes and check blocks give.
var RegistrationFields = []schema.Arg{
	{Name: "kind", Wire: "Kind"},
	{Name: "socket_path", Wire: "SocketPath"},
	taggedAddressesArg, weightsArg,
	{Name: "enable_tag_override", Wire: "EnableTagOverride", Type: schema.Bool},
	{Name: "proxy", Wire: "Proxy", Type: schema.Object, Args: proxyFields},
	{Name: "connect", Wire: "Connect", Type: schema.Object, Args: []schema.Arg{
		{Name: "native", Wire: "Native", Type: schema.Bool},
		{Name: "sidecar_service", Wire: "SidecarService", Type: schema.Object, Args: sidecarFields},
	}},
	enterprise[0], enterprise[1],
}

// sidecarFields are what connect's sidecar_service may set of the
// sidecar the agent registers with the service (Consul's
// agent/sidecar_service.go fills in the rest from its parent).
var sidecarFields = []schema.Arg{
	{Name: "kind", Wire: "Kind"},
	{Name: "id", Wire: "ID"},
	{Name: "name", Wire: "Name"},
	{Name: "port", Wire: "Port", Type: schema.Int},
	{Name: "address", Wire: "Address"},
	{Name: "socket_path", Wire: "SocketPath"},
	{Name: "tags", Wire: "Tags", Type: schema.Strings},
	{Name: "meta", Wire: "Meta", Type: schema.StringMap},
	taggedAddressesArg, weightsArg,
	{Name: "enable_tag_override", Wire: "EnableTagOverride", Type: schema.Bool},
	{Name: "proxy", Wire: "Proxy", Type: schema.Object, Args: proxyFields},
	{Name: "checks", Wire: "Checks", Type: schema.Objects, Args: append([]schema.Arg{{Name: "name", Wire: "Name"}}, CheckFields...), Block: "check", Each: checkSidecarCheck},
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
func checkRegistration(d schema.Decoder, s *Decl, rng hcl.Range) {
	kind, _ := s.Fields["Kind"].(string)
	proxy, _ := s.Fields["Proxy"].(map[string]any)
	switch {
	case !slices.Contains(serviceKinds, kind):
		d.Errorf(rng, rng, "Invalid kind", "kind %q is none of the kinds Consul registers: %s (or none, a plain service).%s", kind, strings.Join(serviceKinds[1:], ", "), onPurpose("the agent takes any kind, and no proxy or gateway serves an unknown one"))
	case kind == "connect-proxy" && s.Port == 0 && s.Fields["SocketPath"] == nil:
		d.Errorf(rng, rng, "Connect proxy without a port", "A connect-proxy registration needs a port or a socket_path: the agent refuses it otherwise.")
	case kind == "connect-proxy" && proxy["DestinationServiceName"] == nil:
		d.Errorf(rng, rng, "Connect proxy without a destination", "A connect-proxy registration needs proxy.destination_service_name, the service it proxies: the agent refuses it otherwise.")
	case kind == "mesh-gateway" && s.Port == 0:
		d.Errorf(rng, rng, "Mesh gateway without a port", "A mesh-gateway registration needs a port: the agent refuses it otherwise.")
	case kind == "" && proxy != nil:
		d.Errorf(rng, rng, "Proxy settings without a proxy kind", "proxy is the settings of a connect-proxy or a gateway: set kind, or move the settings into connect { sidecar_service { proxy { ... } } }.")
	case unspecified(s.Address):
		d.Errorf(rng, rng, "Invalid service address", "address %q is the unspecified address, which the agent refuses (\"Invalid service address\"): a registration says where the service is reached. Give its IP or host name, or leave address out for the agent's own.", s.Address)
	}
	if sc := SidecarOf(s.Fields); sc != nil {
		if k, _ := sc["Kind"].(string); k != "" && k != "connect-proxy" {
			d.Errorf(rng, rng, "Invalid sidecar kind", "sidecar_service's kind %q is refused by the agent: it registers every sidecar as a connect-proxy. Leave kind out, or write \"connect-proxy\".", k)
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
func checkCheck(d schema.Decoder, ch *Check, rng hcl.Range) {
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
		d.Errorf(rng, rng, "Invalid check", "A check sets exactly one of http, tcp, udp, ttl, grpc, h2ping, alias_service (or alias_node), args (a script) or docker_container_id; this one sets %s.%s", plans.OrNone(types, "none"), twoTypes(types))
	case needsInterval && ch.Def["Interval"] == nil:
		d.Errorf(rng, rng, "Check without an interval", "A %s check runs every interval: set interval, such as \"10s\".", types[0])
	case types[0] == "ttl" && ch.Def["Interval"] != nil:
		d.Errorf(rng, rng, "Interval of a ttl check", "A ttl check does not run on an interval (the service passes it within its ttl), and the agent refuses both: leave interval out.")
	case hasStatus && !slices.Contains(checkStatuses, status):
		d.Errorf(rng, rng, "Invalid check status", "status %q is none of Consul's: passing, warning or critical.", status)
	case ch.Def["CheckID"] == nil && UnnamedCheck(ch.Name):
		d.Errorf(rng, rng, "Invalid check name", "A check named %q would take the ID that Consul gives checks registered without one (service:<id>:%s): give it a name with a letter, or a check_id.", ch.Name, ch.Name)
	case types[0] == "docker" && ch.Def["Args"] == nil && ch.Def["Shell"] == nil:
		d.Errorf(rng, rng, "Docker check without a command", "A docker check runs args (or shell) in the container: set args.")
	}
}

// checkSidecarCheck checks a sidecar's check (def, by wire name, its
// name among them), written at rng, as a service's check blocks are.
func checkSidecarCheck(d schema.Decoder, def map[string]any, rng hcl.Range) {
	name, _ := def["Name"].(string)
	checkCheck(d, &Check{Name: name, Def: def}, rng)
}
