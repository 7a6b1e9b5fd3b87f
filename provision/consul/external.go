package consul

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"

	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision"
	"github.com/provision-dev/provision/provision/adapter"
	"github.com/provision-dev/provision/provision/addrs"
	"github.com/provision-dev/provision/provision/consul/client"
	"github.com/provision-dev/provision/provision/parallel"
	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/schema"
)

// A service of a host that runs no Consul agent (a database on a
// legacy host: service "db" { node = "legacy-host" ... }) is registered,
// in Consul's own model, on an external node through the catalog: PUT
// /v1/catalog/register with the node meta external-node and
// external-probe, which consul-esm reads to run its HTTP and TCP checks
// (hashicorp/consul-esm's README). No agent is authoritative for such a
// node, so no anti-entropy removes the registration; on a node that runs
// an agent, that agent would remove it within a minute
// (hashicorp/consul#729, #7513), so such a node is refused. The services
// of every external node go through one backend, "catalog", on the
// cluster's agent: it reads the declared nodes and those provision made
// (their node meta says managed-by), and plans each service with the
// rules of an agent's (planService), its requests the catalog's
// (nodeAPI).

// externalMeta is the node meta of an external node provision makes.
var externalMeta = map[string]string{"external-node": "true", "external-probe": "true", adapter.ManagedByKey: "provision"}

const (
	catalogRegisterAPI   = "/v1/catalog/register"
	catalogDeregisterAPI = "/v1/catalog/deregister"
)

// External is the backend of the services of external nodes.
type External struct {
	provision.NoCapabilities
	// b plans a node's services as an agent's are planned; its requests
	// are made by a nodeAPI of the node.
	b *Backend
	// nodes are the declared external nodes, and ids the IDs of their
	// services, sorted.
	nodes, ids []string
}

// NewExternal is the backend of the services cfg declares on external
// nodes, read and written through the cluster's agent c. A run reads it
// when the specs declare such a service (Declares), or when the record
// of the project's agents says it had some at its last apply (the last
// one's block removed), so that they are deleted.
func NewExternal(cfg *schema.Config, c *client.Agent, o Options) *External {
	services := Services(cfg)
	e := &External{b: &Backend{cfg: cfg, declared: declared{services: services, proxy: ProxyOf(cfg)}, c: c, replace: replaced(o), w: agentAPI{}}}
	for _, s := range services {
		if s.Node != "" {
			e.ids = append(e.ids, s.Name)
			if !slices.Contains(e.nodes, s.Node) {
				e.nodes = append(e.nodes, s.Node)
			}
		}
	}
	slices.Sort(e.nodes)
	slices.Sort(e.ids)
	return e
}

// Declares says whether the specs declare a service of an external node.
func (e *External) Declares() bool { return len(e.nodes) > 0 }

// externalState is what a plan reads of the external nodes: each node
// read (a declared one, or one provision made) with its services and
// checks as an agent's state holds them, and the nodes of the LAN pool,
// which run an agent.
type externalState struct {
	Nodes   map[string]*externalNode `json:"nodes"`
	Members []string                 `json:"members"`
}

// externalNode is one external node as read: its address and meta, and
// its services and their checks (nil Meta: the node does not exist).
type externalNode struct {
	Address string            `json:"address,omitempty"`
	Meta    map[string]string `json:"meta,omitempty"`
	agentState
}

func (externalState) Server() string { return "Consul catalog" }
func (externalState) Known() error   { return nil }

// Info names the backend: the catalog, through the cluster's agent.
func (e *External) Info() plans.BackendInfo {
	return plans.BackendInfo{Name: "catalog", Kind: client.CatalogKind, Address: e.b.c.Address(),
		Scope: adapter.RawJSON(struct {
			Project string   `json:"project"`
			Nodes   []string `json:"nodes"`
			IDs     []string `json:"ids"`
		}{e.b.cfg.Project, e.nodes, e.ids})}
}

// Read reads the nodes provision made (GET /v1/catalog/nodes, by their
// meta) and the LAN pool's members (GET /v1/agent/members), then each
// declared or made node's services (GET /v1/catalog/node-services/<node>)
// and checks (GET /v1/health/node/<node>), side by side.
func (e *External) Read(ctx context.Context, _ plans.Mode) (plans.State, hcl.Diagnostics) {
	c := e.b.c
	var made []struct{ Node string }
	var members []struct{ Name string }
	errs := make([]error, 2)
	parallel.Do(2, 2, func(i int) {
		errs[i] = c.Net.Call(ctx, true, func(ctx context.Context) error {
			var err error
			if i == 0 {
				_, err = c.Get(ctx, "/v1/catalog/nodes?node-meta="+url.QueryEscape(adapter.ManagedByKey+":provision")+"&node-meta=external-node:true", &made)
			} else {
				_, err = c.Get(ctx, "/v1/agent/members", &members)
			}
			return err
		})
	})
	for _, err := range errs {
		if err != nil {
			return nil, hcl.Diagnostics{c.Unreadable(fmt.Errorf("reading the external nodes: %w", err))}
		}
	}
	st := externalState{Nodes: map[string]*externalNode{}}
	for _, m := range members {
		st.Members = append(st.Members, m.Name)
	}
	slices.Sort(st.Members)
	names := slices.Clone(e.nodes)
	for _, m := range made {
		if !slices.Contains(names, m.Node) {
			names = append(names, m.Node)
		}
	}
	read := make([]*externalNode, len(names))
	errs = make([]error, len(names))
	parallel.Do(len(names), 8, func(i int) { read[i], errs[i] = e.readNode(ctx, names[i]) })
	for i, name := range names {
		if errs[i] != nil {
			return nil, hcl.Diagnostics{c.Unreadable(fmt.Errorf("reading the external node %q: %w", name, errs[i]))}
		}
		st.Nodes[name] = read[i]
	}
	return st, nil
}

// readNode reads one node's services and their checks.
func (e *External) readNode(ctx context.Context, name string) (*externalNode, error) {
	c := e.b.c
	var services struct {
		Node *struct {
			Address string
			Meta    map[string]string
		}
		Services []*reportedService
	}
	var checks []struct {
		CheckID, Name, ServiceID, Type, Notes string
		Definition                            struct{ Interval, Timeout string }
	}
	err := c.Net.Call(ctx, true, func(ctx context.Context) error {
		if _, err := c.Get(ctx, "/v1/catalog/node-services/"+url.PathEscape(name), &services); err != nil {
			return err
		}
		_, err := c.Get(ctx, "/v1/health/node/"+url.PathEscape(name), &checks)
		return err
	})
	if err != nil {
		return nil, err
	}
	n := &externalNode{agentState: agentState{Services: map[string]*agentService{}, Checks: map[string]map[string]liveCheck{}}}
	if services.Node != nil {
		n.Address, n.Meta = services.Node.Address, services.Node.Meta
	}
	for _, r := range services.Services {
		s, err := r.service()
		if err != nil {
			return nil, fmt.Errorf("service %q: %w", r.ID, err)
		}
		n.Services[s.ID] = s
	}
	for _, ch := range checks {
		if ch.ServiceID == "" {
			continue // the node's own
		}
		if n.Checks[ch.ServiceID] == nil {
			n.Checks[ch.ServiceID] = map[string]liveCheck{}
		}
		n.Checks[ch.ServiceID][ch.CheckID] = liveCheck{Name: ch.Name, ServiceID: ch.ServiceID, Type: ch.Type, Interval: ch.Definition.Interval, Timeout: ch.Definition.Timeout, Notes: ch.Notes}
	}
	return n, nil
}

// DecodeState reads the state a snapshot holds.
func (e *External) DecodeState(dec *json.Decoder) (plans.State, error) {
	var st externalState
	return st, dec.Decode(&st)
}

// Greenfield is the state of a catalog without external nodes.
func (e *External) Greenfield() plans.State {
	return externalState{Nodes: map[string]*externalNode{}}
}

// Send sends one request through the cluster's agent.
func (e *External) Send(ctx context.Context, r plans.Request) error { return e.b.Send(ctx, r) }

// Plan gives the engine the services declared on external nodes and
// those the project owns there.
func (e *External) Plan(s plans.State, _ plans.Mode) (provision.Planning, hcl.Diagnostics) {
	st := s.(externalState)
	var declared []*Decl
	for _, d := range e.b.services {
		if d.Node != "" {
			declared = append(declared, d)
		}
	}
	owned, where := e.owned(st)
	return provision.Planning{
		Kinds: provision.Kinds(provision.Objects{
			Kind:     Service,
			Declared: schema.Declarations(declared),
			Owned:    owned,
			Plan:     func(i int) (*plans.Change, hcl.Diagnostics) { return e.plan(st, declared[i], where) },
			Gone: func(id string, _ int) provision.Gone {
				node := where[id][0]
				l := st.Nodes[node].Services[id]
				return provision.Gone{
					Addr: addrs.Addr{Kind: Service, Name: id}, Before: adapter.RawJSON(live(l)),
					Delete:    []plans.Request{e.removal(st, node, id)},
					Forget:    func() []plans.Request { return []plans.Request{e.api(st, node, "").register(forgotten(l), false)} },
					Protected: adapter.ProtectedBy(l.Meta),
				}
			},
		}),
		Project: e.b.cfg.Project,
		Removed: e.b.cfg.Removed,
		Planned: plans.Planned{Fingerprint: plans.DigestWhenRead(func() string { return e.fingerprint(st) })},
		Finish: func(p *plans.Planned, _ bool) hcl.Diagnostics {
			e.emptied(st, p.Changes)
			return nil
		},
	}, nil
}

// fingerprint digests what the plan used of st: the project's services
// and the declared ones on each node, whether each declared node runs an
// agent, but not another project's services or the rest of the pool.
func (e *External) fingerprint(st externalState) string {
	type node struct {
		Services map[string]*agentService
		Checks   map[string]map[string]liveCheck
		Agent    bool
	}
	used := map[string]node{}
	for name, n := range st.Nodes {
		u := node{Services: map[string]*agentService{}, Checks: map[string]map[string]liveCheck{}, Agent: slices.Contains(st.Members, name)}
		for id, s := range n.Services {
			if adapter.OwnerOf(s.Meta) == e.b.cfg.Project || slices.Contains(e.ids, id) {
				u.Services[id], u.Checks[id] = s, n.Checks[id]
			}
		}
		used[name] = u
	}
	return adapter.Digest(used)
}

// owned are the IDs of the project's services on the nodes read, sorted,
// and the nodes each is on.
func (e *External) owned(st externalState) ([]string, map[string][]string) {
	where := map[string][]string{}
	for _, node := range slices.Sorted(maps.Keys(st.Nodes)) {
		for id, s := range st.Nodes[node].Services {
			if adapter.OwnerOf(s.Meta) == e.b.cfg.Project {
				where[id] = append(where[id], node)
			}
		}
	}
	return slices.Sorted(maps.Keys(where)), where
}

// plan is the change of a service declared on an external node, planned
// as an agent's on that node's view (planService); its copies the project
// owns on other nodes (a move) are deregistered after it is registered.
func (e *External) plan(st externalState, s *Decl, where map[string][]string) (*plans.Change, hcl.Diagnostics) {
	if slices.Contains(st.Members, s.Node) {
		return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "External node runs an agent",
			Detail: fmt.Sprintf("The %s is a member of the datacenter's LAN pool: it runs a Consul agent, which removes a registration made through the catalog on its node within a minute (its anti-entropy; hashicorp/consul#729). "+
				"Declare the node's agent (agent %q { address = ... }) and register the service through it (agent = agent.%s), or give the external node another name.", nodeName(s.Node), s.Node, s.Node),
			Subject: s.NodeRange.Ptr(), Context: s.DeclRange.Ptr()}}
	}
	view := agentState{Services: map[string]*agentService{}}
	if n := st.Nodes[s.Node]; n != nil {
		view = n.agentState
	}
	b := *e.b
	b.w = e.api(st, s.Node, s.Address)
	c, diags := b.planService(view, s)
	if c == nil {
		return nil, diags
	}
	for _, node := range where[s.Name] {
		if node == s.Node {
			continue
		}
		c.Requests = append(c.Requests, e.removal(st, node, s.Name))
		c.Because(plans.ReasonMovedAway, fmt.Sprintf("moved from %s, where it is deregistered once registered here", nodeName(node)))
		if c.Action == plans.NoOp {
			c.Action = plans.Update
		}
	}
	return c, diags
}

// removal deregisters the service id from node: the node with it when
// provision made the node, the service is its last, and no service of
// the specs is to be on it.
func (e *External) removal(st externalState, node, id string) plans.Request {
	if n := st.Nodes[node]; n != nil && len(n.Services) == 1 && e.empties(n, node) {
		return catalogRequest(catalogDeregisterAPI, map[string]any{"Node": node})
	}
	return e.api(st, node, "").deregister(id)
}

// empties says whether a plan that removes the services of the node n
// may delete the node: provision made it, and no service of the specs is
// to be on it.
func (e *External) empties(n *externalNode, node string) bool {
	return n.Meta[adapter.ManagedByKey] == "provision" && !slices.ContainsFunc(e.b.services, func(s *Decl) bool { return s.Node == node })
}

// emptied deletes each node provision made that the plan empties of
// several services: one that no service of the specs is on, whose every
// service is the project's and deleted by the plan. Its last delete (by
// ID) deletes the node too, once the others are done (Needs), so that -target takes them
// all or leaves the node. Another project's service registered on it
// between the read and the send goes with it: the lock is per project.
func (e *External) emptied(st externalState, changes []*plans.Change) {
	deleting := map[string]*plans.Change{}
	for _, c := range changes {
		if c.Action == plans.Delete {
			deleting[c.Addr.Name] = c
		}
	}
	for _, node := range slices.Sorted(maps.Keys(st.Nodes)) {
		n := st.Nodes[node]
		if len(n.Services) < 2 || !e.empties(n, node) {
			continue // a last service's removal deletes its node (removal)
		}
		ids := slices.Sorted(maps.Keys(n.Services))
		if slices.ContainsFunc(ids, func(id string) bool {
			return deleting[id] == nil || adapter.OwnerOf(n.Services[id].Meta) != e.b.cfg.Project
		}) {
			continue
		}
		last := deleting[ids[len(ids)-1]]
		last.Requests = append(last.Requests, catalogRequest(catalogDeregisterAPI, map[string]any{"Node": node}))
		for _, id := range ids[:len(ids)-1] {
			last.Needs = append(last.Needs, deleting[id].Addr)
		}
	}
}

// api is the nodeAPI of node; address is the node's when it is new.
func (e *External) api(st externalState, node, address string) nodeAPI {
	api := nodeAPI{node: node, address: address, datacenter: e.b.c.Conf.Datacenter}
	if n := st.Nodes[node]; n != nil && n.Meta != nil {
		api.address, api.exists = n.Address, true
	}
	return api
}

// nodeAPI writes the services of one external node through the catalog.
type nodeAPI struct {
	node, address, datacenter string
	// exists: the node is registered; its address and meta are left as
	// they are (SkipNodeUpdate).
	exists bool
}

func (n nodeAPI) register(r registration, _ bool) plans.Request {
	checks := make([]map[string]any, 0, len(r.Checks))
	for _, c := range r.Checks {
		var hc map[string]any
		_ = json.Unmarshal(adapter.RawJSON(c), &hc)
		top := map[string]any{"Node": n.node, "ServiceID": r.ID}
		for _, k := range []string{"CheckID", "Name", "Status", "Notes"} {
			if v, ok := hc[k]; ok {
				top[k] = v
				delete(hc, k)
			}
		}
		top["Definition"] = hc
		checks = append(checks, top)
	}
	r.Checks = nil
	// The catalog takes a service as the agent reports it: its name is
	// Service, not Name.
	var service map[string]any
	_ = json.Unmarshal(adapter.RawJSON(r), &service)
	service["Service"] = service["Name"]
	delete(service, "Name")
	body := map[string]any{"Node": n.node, "Address": n.address, "NodeMeta": externalMeta, "Service": service, "SkipNodeUpdate": n.exists}
	if len(checks) > 0 {
		body["Checks"] = checks
	}
	if n.datacenter != "" {
		body["Datacenter"] = n.datacenter
	}
	return catalogRequest(catalogRegisterAPI, body)
}

func (n nodeAPI) deregister(id string) plans.Request {
	return catalogRequest(catalogDeregisterAPI, map[string]any{"Node": n.node, "ServiceID": id})
}

func (n nodeAPI) deregisterCheck(id string) plans.Request {
	return catalogRequest(catalogDeregisterAPI, map[string]any{"Node": n.node, "CheckID": id})
}

// replacesChecks: the catalog keeps the checks a registration leaves out.
func (nodeAPI) replacesChecks() bool { return false }

// catalogRequest is PUT api with body: registering and deregistering
// through the catalog are idempotent.
func catalogRequest(api string, body any) plans.Request {
	return plans.Request{Method: "PUT", Path: api, Header: jsonHeaders, Body: adapter.RawJSON(body), Idempotent: true}
}

// Converge is the state once the catalog's requests of changes are done.
func (e *External) Converge(s plans.State, changes []*plans.Change) (plans.State, error) {
	st := s.(externalState)
	next := externalState{Nodes: maps.Clone(st.Nodes), Members: st.Members}
	agent := &Backend{}
	for _, c := range changes {
		for _, r := range c.Requests {
			var body struct {
				Node, Address, ServiceID, CheckID string
				Service                           map[string]any
				Checks                            []struct {
					CheckID, Name, Status, Notes string
					Definition                   map[string]any
				}
			}
			if err := json.Unmarshal(r.Body, &body); err != nil {
				return nil, fmt.Errorf("%s: %s %s: %w", c.Addr, r.Method, r.Path, err)
			}
			n := next.Nodes[body.Node]
			if n == nil {
				n = &externalNode{Address: body.Address, Meta: externalMeta, agentState: agentState{Services: map[string]*agentService{}}}
			}
			var as plans.Request
			switch {
			case r.Path == catalogRegisterAPI && body.Service != nil:
				body.Service["Name"] = body.Service["Service"]
				delete(body.Service, "Service")
				var reg registration
				if err := json.Unmarshal(adapter.RawJSON(body.Service), &reg); err != nil {
					return nil, fmt.Errorf("%s: %s %s: %w", c.Addr, r.Method, r.Path, err)
				}
				for _, ch := range body.Checks {
					def := maps.Clone(ch.Definition)
					if ch.Notes != "" {
						def["Notes"] = ch.Notes
					}
					reg.Checks = append(reg.Checks, check{CheckID: ch.CheckID, Name: ch.Name, Def: def})
				}
				as = registerRequest(reg, false)
			case body.CheckID != "":
				as = agentAPI{}.deregisterCheck(body.CheckID)
			case body.ServiceID != "":
				as = agentAPI{}.deregister(body.ServiceID)
			default:
				delete(next.Nodes, body.Node)
				continue
			}
			ns, err := agent.Converge(n.agentState, []*plans.Change{{Addr: c.Addr, Requests: []plans.Request{as}}})
			if err != nil {
				return nil, err
			}
			next.Nodes[body.Node] = &externalNode{Address: n.Address, Meta: n.Meta, agentState: ns.(agentState)}
		}
	}
	return next, nil
}

// nodeName names an external node for a person.
func nodeName(node string) string { return "node " + strconv.Quote(node) }
