// Package client is provision's connection to one Consul agent, shared by
// the roles that talk to it (the agent's services, the KV store, the
// cluster's coordination, the ACL checks): the agent's address and token
// as the specs and Consul's environment give them, the deadlines of every
// request, and how the agent's refusals and failures read for a person.
package client

import (
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"

	"github.com/hashicorp/consul/api"
	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision/adapter"
)

// AgentKind is the kind of the backend of a Consul agent's services
// (plans.BackendInfo.Kind), here so that the cluster's coordination, which
// the agents' backend package imports, finds those backends by it too.
const AgentKind = "consul"

// CatalogKind is the kind of the backend of the services of external
// nodes, written through the catalog; its name is "catalog".
const CatalogKind = "consul-catalog"

// Agent is one Consul agent as provision reaches it.
type Agent struct {
	Conf *api.Config
	API  *api.Client
	HTTP *http.Client
	Net  adapter.Deadlines
	// Name is the agent block's name; "" for the one agent of Consul (the
	// consul block, CONSUL_HTTP_ADDR).
	Name string
	// Where points a diagnostic about the agent itself at the spec: its
	// agent block, else the consul block, else the project.
	Where hcl.Range
	// Declares is the consul block that declares the agent's datacenter,
	// for a person: "the consul block", `the consul "dc2" block`.
	Declares string
}

// Open sets up the client of the agent conf names (Consul's environment
// already read into it), with deadlines net; name and where are the
// agent block's (Agent.Name, Agent.Where).
func Open(conf *api.Config, net adapter.Deadlines, name string, where hcl.Range) (*Agent, error) {
	// Accept "http://host:port" as CONSUL_HTTP_ADDR does.
	if scheme, host, ok := strings.Cut(conf.Address, "://"); ok {
		conf.Scheme, conf.Address = scheme, host
	}
	c, err := api.NewClient(conf)
	if err != nil {
		return nil, err
	}
	hc, err := api.NewHttpClient(conf.Transport, conf.TLSConfig)
	if err != nil {
		return nil, err
	}
	if t, ok := hc.Transport.(*http.Transport); ok {
		// HTTP/1.1: behind HTTP/2 a refused handshake is only "client conn
		// could not be established", and the TLS alert that names the
		// missing setting (a client certificate required) is lost.
		t.ForceAttemptHTTP2 = false
		t.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
		// An agent on this machine (Consul's advice: each node talks to
		// its own) is read uncompressed: gzip costs the agent and the
		// plan more CPU than it saves on loopback
		// (docs/internals/performance.md has the measurement).
		t.DisableCompression = loopback(conf.Address)
	}
	return &Agent{Conf: conf, API: c, HTTP: hc, Net: net, Name: name, Where: where}, nil
}

// loopback says whether the agent's host:port is this machine's.
func loopback(address string) bool {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		host = address
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return host == "localhost" || ip != nil && ip.IsLoopback()
}

// Address is the agent's base URL; the token is never part of it.
func (a *Agent) Address() string { return a.Conf.Scheme + "://" + a.Conf.Address }

// Sender sends to the agent: its base URL and the token added to each
// request, and Consul's plain-text refusals quoted.
func (a *Agent) Sender() adapter.Sender {
	return adapter.Sender{
		Net: a.Net,
		Do: func(req *http.Request) (*http.Response, error) {
			req.URL.Scheme, req.URL.Host = a.Conf.Scheme, a.Conf.Address
			if a.Conf.Token != "" {
				req.Header.Set("X-Consul-Token", a.Conf.Token)
			}
			return a.HTTP.Do(req)
		},
		Refuse: func(code int, _ string, body []byte) error { return a.Answered(code, string(body)) },
	}
}

// Get reads one endpoint of the agent with the token into out, and
// returns the answer's headers, which say what the ACLs did (the API
// client drops them: it stops reading headers at the X-Consul-LastContact
// the agent endpoints do not send).
func (a *Agent) Get(ctx context.Context, path string, out any) (http.Header, error) {
	return a.get(ctx, path, func(body []byte) error { return json.Unmarshal(body, out) })
}

// GetObject is Get of an answer that is one JSON object, keyed by ID (the
// agent's services or checks): decoded by adapter.DecodeObject, side by
// side when it is large.
func GetObject[V any](ctx context.Context, a *Agent, path string) (map[string]V, http.Header, error) {
	var m map[string]V
	h, err := a.get(ctx, path, func(body []byte) (err error) {
		m, err = adapter.DecodeObject[V](body)
		return err
	})
	return m, h, err
}

// get reads one endpoint of the agent with the token, whole, and decodes
// its body with decode.
func (a *Agent) get(ctx context.Context, path string, decode func([]byte) error) (http.Header, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, path, nil)
	if err != nil {
		return nil, err
	}
	resp, err := a.Sender().Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return nil, a.Answered(resp.StatusCode, string(msg))
	}
	var body bytes.Buffer
	if resp.ContentLength > 0 {
		body.Grow(int(min(resp.ContentLength, 64<<20)))
	}
	if _, err := body.ReadFrom(resp.Body); err != nil {
		return nil, err
	}
	return resp.Header, decode(body.Bytes())
}

// self reads GET /v1/agent/self (which needs agent:read) into out.
func (a *Agent) self(ctx context.Context, out any) error {
	return a.Net.Call(ctx, true, func(ctx context.Context) error {
		_, err := a.API.Raw().Query("/v1/agent/self", out, (&api.QueryOptions{}).WithContext(ctx))
		return a.StatusError(err)
	})
}

// NodeName is the node of the agent, from GET /v1/agent/self.
func (a *Agent) NodeName(ctx context.Context) (string, error) {
	var self struct{ Config struct{ NodeName string } }
	err := a.self(ctx, &self)
	return self.Config.NodeName, err
}

// InDatacenter checks that the agent is in the datacenter want (nothing
// when want is ""), from GET /v1/agent/self, its Config.Datacenter: the
// one its agent API registers services in ("Register Service",
// developer.hashicorp.com/consul/api-docs/agent/service). An agent of
// another datacenter is an *Elsewhere; one that cannot say (a token
// without agent:read) the read's error.
func (a *Agent) InDatacenter(ctx context.Context, want string) error {
	if want == "" {
		return nil
	}
	var self struct{ Config struct{ Datacenter string } }
	if err := a.self(ctx, &self); err != nil {
		return err
	}
	if dc := self.Config.Datacenter; dc != want {
		which := "The Consul agent at " + a.Address()
		if a.Name != "" {
			which = fmt.Sprintf("The Consul agent %s at %s", Named(a.Name), a.Address())
		}
		return &Elsewhere{Agent: which, In: dc, Want: want, Declares: cmp.Or(a.Declares, "the consul block")}
	}
	return nil
}

// Datacenter checks that the agent is in the datacenter want, its consul
// block's (InDatacenter), for a plan: one of another datacenter is an
// error naming both, one whose datacenter cannot be read a warning; nil
// when it is in it, or want is "".
func (a *Agent) Datacenter(ctx context.Context, want string) hcl.Diagnostics {
	err := a.InDatacenter(ctx, want)
	var elsewhere *Elsewhere
	switch {
	case errors.As(err, &elsewhere):
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Agent in another datacenter", Detail: err.Error() + ". " + elsewhere.Advice(), Subject: a.Where.Ptr()}}
	case err != nil:
		return hcl.Diagnostics{{Severity: hcl.DiagWarning, Summary: "Datacenter not checked",
			Detail:  fmt.Sprintf("The Consul agent at %s did not say its datacenter (%s), so it is not checked to be %q, %s's: a token with agent:read on its node lets provision check it.", a.Address(), err, want, cmp.Or(a.Declares, "the consul block")),
			Subject: a.Where.Ptr()}}
	}
	return nil
}

// Named is the agent block's instance name for a person: its label
// quoted ("node-a"), or, for an instance of a block with for_each, its
// address (agent.fleet["node7"]), which quoting would escape.
func Named(name string) string {
	if strings.Contains(name, "[") {
		return "agent." + name
	}
	return strconv.Quote(name)
}

// Elsewhere is the error of an agent in another datacenter than the one
// the consul block declares.
type Elsewhere struct {
	Agent    string // "The Consul agent "node-1" at http://..."
	In, Want string // its datacenter, and the declared one
	Declares string // the consul block that declares Want
}

func (e *Elsewhere) Error() string {
	return fmt.Sprintf("%s is in datacenter %q, and %s declares %q", e.Agent, e.In, e.Declares, e.Want)
}

// Advice says why nothing can be done there, and what to change.
func (e *Elsewhere) Advice() string {
	return fmt.Sprintf("An agent registers services in its own datacenter only, so the project's services would land in %q while its lock and keys are asked of %q: nothing is sent. "+
		"Point the address at an agent of %q, or declare the agent's own datacenter: a project that spans datacenters declares each other one as consul \"<name>\" { address = ... } and its agents and keys there with consul = consul.<name>.", e.In, e.Want, e.Want)
}

// Version is the agent's Consul version, from GET /v1/agent/self:
// "Consul 1.15.4", or "" when it cannot be read.
func (a *Agent) Version(ctx context.Context) string {
	var self struct{ Config struct{ Version string } }
	if err := a.self(ctx, &self); err != nil || self.Config.Version == "" {
		return ""
	}
	return "Consul " + self.Config.Version
}

// Unreadable is the diagnostic of a failed read of the agent, at its
// agent block (or the consul block); nothing is written anywhere then.
func (a *Agent) Unreadable(err error) *hcl.Diagnostic {
	d := &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  "Cannot read the Consul agent",
		Detail:   fmt.Sprintf("%s. Check that the agent runs and that CONSUL_HTTP_ADDR (or the consul block's address) points at it; an ACL token goes in CONSUL_HTTP_TOKEN.", err),
		Subject:  a.Where.Ptr(),
	}
	if setting := tlsSetting(err); setting != "" {
		d.Summary = "Cannot reach the Consul agent over TLS"
		d.Detail = fmt.Sprintf("%s: %s. Nothing was sent.", err, setting)
		return d
	}
	if a.Name != "" {
		d.Summary = "Cannot read the Consul agent " + Named(a.Name)
		d.Detail = fmt.Sprintf("%s. Check that the agent of this node runs at %s (the agent block's address); an ACL token goes in CONSUL_HTTP_TOKEN. Nothing was sent to any agent.", err, a.Address())
	}
	return d
}

// NoToken is the error of a run without a token on an agent whose ACLs
// deny by default.
func (a *Agent) NoToken() *hcl.Diagnostic {
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  "No Consul ACL token",
		Detail: fmt.Sprintf("%s runs ACLs and no token was given: the anonymous token reads nothing under default_policy deny (so a plan would show every service as new) and may not write what the specs need. "+
			"Set CONSUL_HTTP_TOKEN (or CONSUL_HTTP_TOKEN_FILE) to a token with the policy provision policy prints.", a.Address()),
		Subject: a.Where.Ptr(),
	}
}

// Answered is the engine's error for an answer of the agent outside 2xx.
// A 403 says which permission it lacks, that retrying will not help, and
// where the policy comes from.
func (a *Agent) Answered(code int, msg string) error {
	msg = strings.TrimSpace(msg)
	text := fmt.Sprintf("consul answered %d: %s", code, msg)
	if code == http.StatusForbidden {
		why := "the token lacks this permission on " + a.Address()
		if strings.Contains(msg, "ACL not found") {
			why = a.Address() + " does not know the token (unknown, or deleted)"
		}
		text = fmt.Sprintf("consul answered 403 Forbidden: %s (%s; retrying will not help: give the token the policy provision policy prints)", strings.TrimSuffix(msg, "."), why)
	}
	return &adapter.StatusError{Code: code, Message: text, Leaderless: leaderless(code, msg), SlowDown: rateLimited(code, msg)}
}

// rateLimited says whether an answer of Consul is its global request rate
// limit (limits.request_limits, Consul 1.15 and later; "Limit traffic
// rates for a datacenter", developer.hashicorp.com/consul/docs/manage/rate-limit/global):
// a read over the limit is answered 429, a write that only the leader can
// do 503 "rate limit exceeded for operation that can only be performed by
// the leader, try again later" (seen on Consul 1.15.4 with write_rate =
// 20). Nothing was done; the request is sent again, later.
func rateLimited(code int, msg string) bool {
	return code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable && strings.Contains(msg, "rate limit exceeded")
}

// StatusError turns the API client's error for an answer outside 2xx into
// the engine's, so that a 5xx is retried, a 4xx is a refusal and the
// reason is quoted.
func (a *Agent) StatusError(err error) error {
	var se api.StatusError
	if errors.As(err, &se) {
		return a.Answered(se.Code, se.Body)
	}
	return err
}

// SlowDownText is err, or, when its text is Consul's answer that it
// limits its rate, a slow-down that quotes it: for the API client's calls
// that answer with text alone (api.Lock's "failed to acquire lock:
// Unexpected response code: 503 (rate limit exceeded ...)").
func (a *Agent) SlowDownText(err error) error {
	if err == nil || adapter.SlowDown(err) || !strings.Contains(err.Error(), "rate limit exceeded") {
		return err
	}
	return &adapter.StatusError{Code: http.StatusServiceUnavailable, Message: "consul answered " + err.Error(), SlowDown: true}
}

// Disabled says whether err is the answer of an agent that runs no ACLs
// to an ACL request: 401 "ACL support disabled".
func Disabled(err error) bool {
	var se *adapter.StatusError
	return errors.As(err, &se) && se.Code == http.StatusUnauthorized && strings.Contains(se.Message, "ACL support disabled")
}

// leaderless says whether an answer of Consul is that the servers have no
// leader to forward a request to: at a leader's death, for about a second,
// its RPC connection is refused ("rpc error getting client: failed to get
// conn", "lead thread didn't get connection"); without a quorum, "No
// cluster leader" (as Consul's servers answer them, measured on
// Consul 1.15.4: three servers, the leader killed). The request never
// reached a leader, so it was not applied.
func leaderless(code int, msg string) bool {
	if code != http.StatusInternalServerError {
		return false
	}
	for _, s := range []string{"No cluster leader", "rpc error getting client", "failed to get conn", "lead thread didn't get connection", "No known Consul servers"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// tlsSetting names the setting a TLS failure points at, or "".
func tlsSetting(err error) string {
	var alert tls.AlertError
	var unknown x509.UnknownAuthorityError
	var host x509.HostnameError
	var header tls.RecordHeaderError
	// A TLS alert from the server reaches a TCP client as an unexported
	// type behind "remote error: tls: ..."; only QUIC's is an AlertError.
	text := fmt.Sprint(err)
	switch {
	case errors.As(err, &alert) && (alert == 116 || alert == 42), // certificate_required, bad_certificate
		strings.Contains(text, "tls: certificate required"), strings.Contains(text, "tls: bad certificate"):
		return "the agent requires a client certificate: set CONSUL_CLIENT_CERT and CONSUL_CLIENT_KEY to the PEM files of one its CA signed"
	case errors.As(err, &unknown):
		return "the agent's certificate is signed by an authority this machine does not trust: set CONSUL_CACERT to the CA's PEM file (consul-agent-ca.pem)"
	case errors.As(err, &host):
		return "the agent's certificate is not for the name in the address: set CONSUL_TLS_SERVER_NAME to a name it is for (Consul's own are server.<datacenter>.consul and localhost)"
	case errors.As(err, &header):
		return "the agent does not speak TLS at this address: use http:// (or CONSUL_HTTP_SSL=false), or the agent's HTTPS port"
	case strings.Contains(text, "server gave HTTP response to HTTPS client"):
		return "the agent answers plain HTTP at this address: use http:// and its HTTP port, or the agent's HTTPS port"
	}
	return ""
}
