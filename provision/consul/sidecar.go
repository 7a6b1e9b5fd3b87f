package consul

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision/addrs"
)

// sidecarSuffix ends the ID of the sidecar proxy the agent registers for
// a registration with connect { sidecar_service {} } (Consul 1.15's
// agent/sidecar_service.go: "<id>-sidecar-proxy", kind connect-proxy,
// its proxy's destination the service). Deregistering the service
// removes it; registering the service again without it keeps it.
const sidecarSuffix = "-sidecar-proxy"

// sidecarOf is the live sidecar proxy of the service l; nil for none.
func sidecarOf(services map[string]*agentService, l *agentService) *agentService {
	sc := services[l.ID+sidecarSuffix]
	if sc == nil || sc.Fields["Kind"] != "connect-proxy" {
		return nil
	}
	if p, _ := sc.Fields["Proxy"].(map[string]any); p["DestinationServiceID"] != l.ID {
		return nil
	}
	return sc
}

// parentOf is the live service whose sidecar proxy l is; nil when l is
// none's (or nil).
func parentOf(services map[string]*agentService, l *agentService) *agentService {
	if l == nil {
		return nil
	}
	id, ok := strings.CutSuffix(l.ID, sidecarSuffix)
	if !ok || services[id] == nil || sidecarOf(services, services[id]) != l {
		return nil
	}
	return services[id]
}

// sidecarLive is the live sidecar sc of the service l as connect's
// sidecar_service writes it (Consul's api.AgentServiceRegistration, less
// its kind), for comparing with the declared one. With pruned, less what
// the agent fills in from its parent (its ID and name, the tags and meta
// it inherits, the proxy's destination and local service) and what it
// reports empty: what a generated block declares.
func sidecarLive(l, sc *agentService, pruned bool) map[string]any {
	out := maps.Clone(sc.Fields)
	delete(out, "Kind")
	out["ID"], out["Name"], out["Port"] = sc.ID, sc.Service, float64(sc.Port)
	out["Tags"], out["Meta"] = anyList(sc.Tags), anyMap(sc.Meta)
	if sc.Address != "" {
		out["Address"] = sc.Address
	}
	if !pruned {
		return out
	}
	delete(out, "ID")
	if out["Name"] == l.Service+sidecarSuffix {
		delete(out, "Name")
	}
	if slices.Equal(sc.Tags, l.Tags) {
		delete(out, "Tags")
	}
	if maps.Equal(sc.Meta, l.Meta) {
		delete(out, "Meta")
	}
	if p, ok := out["Proxy"].(map[string]any); ok {
		p = maps.Clone(p)
		for k, derived := range sidecarProxy(l.Service, l.ID, l.Port) {
			if p[k] == derived {
				delete(p, k)
			}
		}
		out["Proxy"] = p
	}
	return pruneEmpty(out).(map[string]any)
}

// sidecarAsDeclared reports whether the live sidecar sc of the service l
// is as the declared sidecar_service: its fields, and its checks by what
// the agent reports of them (checks, the live checks of sc). The agent
// registers a sidecar's checks as checks of the sidecar, never in its
// fields, so they are compared as a service's own are (checkDrift).
func sidecarAsDeclared(l, sc *agentService, checks map[string]liveCheck, declared map[string]any) bool {
	fields := maps.Clone(declared)
	want, _ := fields["Checks"].([]any)
	delete(fields, "Checks")
	delete(fields, "Kind") // connect-proxy, or refused: every sidecar's
	if !covers(sidecarLive(l, sc, false), fields) {
		return false
	}
	if _, declaredChecks := declared["Checks"]; !declaredChecks {
		return true // the agent's own default checks, whatever they are
	}
	return len(checkDrift(sidecarChecks(sc.ID, want), checks, slices.Collect(maps.Keys(checks)))) == 0
}

// sidecarChecks are the checks a declared sidecar_service lists, each
// with the ID the agent gives a check of a registration that names none
// (Consul 1.15's agent.go, AddService: service:<id>, and :<n> from 1 when
// there are several).
func sidecarChecks(id string, declared []any) []check {
	out := make([]check, 0, len(declared))
	for i, d := range declared {
		def, _ := d.(map[string]any)
		c := check{CheckID: str(def["CheckID"]), Name: str(def["Name"]), Def: def}
		if c.CheckID == "" {
			c.CheckID = "service:" + id
			if len(declared) > 1 {
				c.CheckID += fmt.Sprintf(":%d", i+1)
			}
		}
		out = append(out, c)
	}
	return out
}

// pruneEmpty is v less the empty values (empty) of its objects, at any
// depth.
func pruneEmpty(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, x := range v {
			if x = pruneEmpty(x); !empty(x) {
				out[k] = x
			}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = pruneEmpty(x)
		}
		return out
	}
	return v
}

func anyList(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

func anyMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// withoutSidecar is fields less connect's sidecar_service (and connect,
// when that was all of it).
func withoutSidecar(fields map[string]any) map[string]any {
	c, ok := fields["Connect"].(map[string]any)
	if !ok || c["SidecarService"] == nil {
		return fields
	}
	out := maps.Clone(fields)
	c = maps.Clone(c)
	delete(c, "SidecarService")
	if len(c) == 0 {
		delete(out, "Connect")
	} else {
		out["Connect"] = c
	}
	return out
}

// sidecarDeclared refuses a block or an import of a sidecar proxy (at
// subject): it is its service's, registered, read and deleted with it.
func sidecarDeclared(addr addrs.Addr, parent *agentService, subject *hcl.Range) *hcl.Diagnostic {
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  "A sidecar proxy is its service's",
		Detail: fmt.Sprintf("%s is the sidecar proxy the agent registered with the service %q (connect { sidecar_service {} }), and goes with it: deregistering the service removes it. "+
			"Declare it inside that service's block, as connect { sidecar_service { ... } }, and import the service (plan -generate-config-out writes both).", addr, parent.ID),
		Subject: subject,
	}
}

// sidecarProxy are the proxy settings the agent gives the sidecar of the
// service name (ID id, on port) unless sidecar_service sets them: the
// service as its destination, on the loopback address.
func sidecarProxy(name, id string, port int) map[string]any {
	return map[string]any{"DestinationServiceName": name, "DestinationServiceID": id, "LocalServiceAddress": "127.0.0.1", "LocalServicePort": float64(port)}
}

// convergedSidecar is the sidecar the agent registers for reg's declared
// sidecar_service sc (Consul 1.15's agent/sidecar_service.go): its ID
// and name after the service's, its tags and meta the service's unless
// it sets its own, its proxy's destination the service. A port the agent
// picks from its range is not known before: 0. Its checks are the
// declared ones, by the IDs the agent gives them.
func convergedSidecar(reg registration, sc map[string]any) (*agentService, []check) {
	out := &agentService{ID: reg.ID + sidecarSuffix, Service: reg.Name + sidecarSuffix, Tags: reg.Tags, Meta: reg.Meta}
	fields := maps.Clone(sc)
	for k, to := range map[string]*string{"ID": &out.ID, "Name": &out.Service, "Address": &out.Address} {
		if v, ok := fields[k].(string); ok {
			*to = v
		}
		delete(fields, k)
	}
	if p, ok := fields["Port"].(float64); ok {
		out.Port = int(p)
	}
	if t, ok := fields["Tags"].([]any); ok {
		out.Tags = nil
		for _, x := range t {
			out.Tags = append(out.Tags, fmt.Sprint(x))
		}
	}
	if m, ok := fields["Meta"].(map[string]any); ok {
		out.Meta = map[string]string{}
		for k, x := range m {
			out.Meta[k] = fmt.Sprint(x)
		}
	}
	declared, _ := fields["Checks"].([]any)
	for _, k := range []string{"Port", "Tags", "Meta", "Checks"} {
		delete(fields, k)
	}
	proxy, _ := fields["Proxy"].(map[string]any)
	fields["Proxy"] = merged(sidecarProxy(reg.Name, reg.ID, reg.Port), proxy)
	fields["Kind"] = "connect-proxy"
	out.Fields = normalize(fields, out.Address, out.Port)
	return out, sidecarChecks(out.ID, declared)
}
