package servers

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Secured is a dev agent with ACLs on (default_policy deny) or one that
// serves HTTPS only and requires client certificates
// (Consul's ACL and TLS docs: developer.hashicorp.com/consul/docs/security/acl
// and developer.hashicorp.com/consul/docs/security/encryption).
type Secured struct {
	*Consul
	// URL is the agent's HTTP API: http://... with ACLs, https://... with
	// TLS.
	URL string
	// Token is the management token (initial_management) of an ACL agent.
	Token string
	// CACert, ClientCert and ClientKey are the PEM files of a TLS agent's
	// CA and of a client certificate it signed.
	CACert, ClientCert, ClientKey string
	client                        *http.Client
}

// StartACLConsul starts a dev agent with ACLs on and default_policy deny;
// its management token is known in advance.
func StartACLConsul(ctx context.Context, dir string, logw io.Writer) (*Secured, error) {
	token := uuid()
	conf := fmt.Sprintf("acl {\n  enabled = true\n  default_policy = \"deny\"\n  tokens {\n    initial_management = %q\n    agent = %q\n  }\n}\n", token, token)
	s := &Secured{Token: token, client: http.DefaultClient}
	err := s.start(ctx, dir, conf, logw, func(c *Consul) { s.URL = "http://" + c.Addr })
	return s, err
}

// StartTLSConsul starts a dev agent that serves HTTPS only and requires a
// client certificate, with a CA and certificates made by consul tls.
func StartTLSConsul(ctx context.Context, dir string, logw io.Writer) (*Secured, error) {
	bin, err := ConsulBinary()
	if err != nil {
		return nil, err
	}
	certs := filepath.Join(dir, "certs")
	if err := os.MkdirAll(certs, 0o700); err != nil {
		return nil, err
	}
	for _, args := range [][]string{{"tls", "ca", "create"}, {"tls", "cert", "create", "-server", "-dc", "dc1"}, {"tls", "cert", "create", "-client", "-dc", "dc1"}} {
		cmd := exec.Command(bin, args...)
		cmd.Dir = certs
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("consul %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	at := func(name string) string { return filepath.Join(certs, name) }
	s := &Secured{CACert: at("consul-agent-ca.pem"), ClientCert: at("dc1-client-consul-0.pem"), ClientKey: at("dc1-client-consul-0-key.pem")}
	pool := x509.NewCertPool()
	ca, err := os.ReadFile(s.CACert)
	if err != nil {
		return nil, err
	}
	pool.AppendCertsFromPEM(ca)
	cert, err := tls.LoadX509KeyPair(s.ClientCert, s.ClientKey)
	if err != nil {
		return nil, err
	}
	s.client = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}}}}
	conf := fmt.Sprintf("tls {\n  defaults {\n    ca_file = %q\n    cert_file = %q\n    key_file = %q\n    verify_incoming = true\n    verify_outgoing = true\n  }\n}\n",
		s.CACert, at("dc1-server-consul-0.pem"), at("dc1-server-consul-0-key.pem"))
	err = s.start(ctx, dir, conf, logw, func(c *Consul) { s.URL = "https://" + c.Addr })
	return s, err
}

// start runs a dev agent with the extra configuration conf; with TLS its
// HTTP port serves HTTPS and plain HTTP is off.
func (s *Secured) start(ctx context.Context, dir, conf string, logw io.Writer, url func(*Consul)) error {
	file := filepath.Join(dir, "secure.hcl")
	if err := os.WriteFile(file, []byte(conf), 0o600); err != nil {
		return err
	}
	c, err := retryBind(logw, func(attempt int, w io.Writer) (*Consul, error) {
		ports, err := FreePorts(6)
		if err != nil {
			return nil, err
		}
		args := []string{"agent", "-dev", "-bind=127.0.0.1", "-client=127.0.0.1", "-node=provision-secure", "-dns-port=-1",
			"-config-file=" + file, "-data-dir=" + filepath.Join(dir, fmt.Sprintf("consul-data-%d", attempt)),
			"-serf-lan-port=" + strconv.Itoa(ports[1]), "-serf-wan-port=" + strconv.Itoa(ports[2]), "-server-port=" + strconv.Itoa(ports[3]),
			"-grpc-port=" + strconv.Itoa(ports[4]), "-grpc-tls-port=-1"}
		if s.CACert != "" {
			args = append(args, "-http-port=-1", "-https-port="+strconv.Itoa(ports[0]))
		} else {
			args = append(args, "-http-port="+strconv.Itoa(ports[0]))
		}
		c := &Consul{Addr: "127.0.0.1:" + strconv.Itoa(ports[0]), Node: "provision-secure", serfLAN: ports[1]}
		url(c)
		return c, c.start(ctx, args, w, func() bool {
			body, ok := s.get("/v1/status/leader")
			if !ok || len(bytes.Trim(body, "\"\n")) == 0 {
				return false
			}
			body, ok = s.get("/v1/catalog/node/" + c.Node)
			return ok && bytes.Contains(body, []byte(`"Node"`))
		}, "elect a leader and register its node")
	})
	s.Consul = c
	return err
}

// get reads a path of the agent with the management token or the client
// certificate.
func (s *Secured) get(path string) ([]byte, bool) {
	code, body, err := s.Do(http.MethodGet, path, "", s.Token)
	return body, err == nil && code == http.StatusOK
}

// Do sends one request to the agent, with the token given (none when
// empty) and, on a TLS agent, the client certificate.
func (s *Secured) Do(method, path, body, token string) (int, []byte, error) {
	req, err := http.NewRequest(method, s.URL+path, strings.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	if token != "" {
		req.Header.Set("X-Consul-Token", token)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// MakeToken makes a policy with rules, and a token with it, through the
// ACL HTTP API with the management token; it returns the token's secret.
func (s *Secured) MakeToken(name, rules string) (string, error) {
	policy, _ := json.Marshal(map[string]string{"Name": name, "Rules": rules})
	if code, body, err := s.Do(http.MethodPut, "/v1/acl/policy", string(policy), s.Token); err != nil || code != http.StatusOK {
		return "", fmt.Errorf("PUT /v1/acl/policy %s: %d %s %v", name, code, body, err)
	}
	code, body, err := s.Do(http.MethodPut, "/v1/acl/token", fmt.Sprintf(`{"Description":%q,"Policies":[{"Name":%q}]}`, name, name), s.Token)
	if err != nil || code != http.StatusOK {
		return "", fmt.Errorf("PUT /v1/acl/token %s: %d %s %v", name, code, body, err)
	}
	var tok struct{ SecretID string }
	err = json.Unmarshal(body, &tok)
	return tok.SecretID, err
}

// NewToken is MakeToken for a test, which fails when it cannot.
func (s *Secured) NewToken(t testing.TB, name, rules string) string {
	t.Helper()
	token, err := s.MakeToken(name, rules)
	if err != nil {
		t.Fatal(err)
	}
	return token
}

// NewACLConsul starts an ACL agent for the test and stops it at its end.
func NewACLConsul(t testing.TB) *Secured {
	t.Helper()
	dir := t.TempDir()
	return forTest(t, "consul (ACLs)", func(log io.Writer) (*Secured, error) { return StartACLConsul(context.Background(), dir, log) })
}

// NewTLSConsul starts a TLS agent for the test and stops it at its end.
func NewTLSConsul(t testing.TB) *Secured {
	t.Helper()
	dir := t.TempDir()
	return forTest(t, "consul (TLS)", func(log io.Writer) (*Secured, error) { return StartTLSConsul(context.Background(), dir, log) })
}

// uuid is a random version 4 UUID, as Consul's tokens are.
func uuid() string {
	b := make([]byte, 16)
	rand.Read(b)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// StartACLClient starts a client agent of node name that joins the ACL
// agent s, with s's management token as its agent token, and waits until
// its node is in the cluster's catalog.
func (s *Secured) StartACLClient(ctx context.Context, dir, node string, logw io.Writer) (*Secured, error) {
	file := filepath.Join(dir, "acl.hcl")
	conf := fmt.Sprintf("acl {\n  enabled = true\n  default_policy = \"deny\"\n  tokens {\n    agent = %q\n  }\n}\n", s.Token)
	if err := os.WriteFile(file, []byte(conf), 0o600); err != nil {
		return nil, err
	}
	client := &Secured{Token: s.Token, client: http.DefaultClient}
	c, err := retryBind(logw, func(attempt int, w io.Writer) (*Consul, error) {
		ports, err := FreePorts(2)
		if err != nil {
			return nil, err
		}
		args := []string{"agent", "-bind=127.0.0.1", "-client=127.0.0.1", "-node=" + node, "-config-file=" + file,
			"-data-dir=" + filepath.Join(dir, fmt.Sprintf("consul-%s-%d", node, attempt)),
			"-http-port=" + strconv.Itoa(ports[0]), "-dns-port=-1", "-serf-lan-port=" + strconv.Itoa(ports[1]),
			"-grpc-port=-1", "-retry-join=127.0.0.1:" + strconv.Itoa(s.serfLAN)}
		a := &Consul{Addr: "127.0.0.1:" + strconv.Itoa(ports[0]), Node: node, serfLAN: ports[1]}
		client.URL = "http://" + a.Addr
		return a, a.start(ctx, args, w, func() bool {
			for _, at := range []*Secured{s, client} {
				if body, ok := at.get("/v1/catalog/node/" + node); !ok || !bytes.Contains(body, []byte(`"Node"`)) {
					return false
				}
			}
			return true
		}, "join the cluster")
	})
	client.Consul = c
	return client, err
}

// NewACLCluster starts an ACL agent and a client agent per node name
// joined to it, for the test; the server comes first.
func NewACLCluster(t testing.TB, nodes ...string) []*Secured {
	t.Helper()
	server := NewACLConsul(t)
	agents := []*Secured{server}
	for _, n := range nodes {
		dir := t.TempDir()
		agents = append(agents, forTest(t, "consul (ACLs) "+n, func(log io.Writer) (*Secured, error) {
			return server.StartACLClient(context.Background(), dir, n, log)
		}))
	}
	return agents
}
