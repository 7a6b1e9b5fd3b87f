package search

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/elastic/go-elasticsearch/v7"
	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision"
	"github.com/provision-dev/provision/provision/adapter"
	"github.com/provision-dev/provision/provision/parallel"
	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/schema"
)

// Backend is one member cluster, reached through a node of it.
type Backend struct {
	provision.NoCapabilities
	target
	scope scope
	// urls are the nodes of the cluster, without credentials: the url
	// or urls of the search block, or ELASTICSEARCH_URL's list.
	urls []string
	// es reaches the cluster through whichever of its nodes answers: a
	// node that refuses a connection is set aside by the client's pool,
	// and the request is sent again to the next (Deadlines.Call retries
	// a refused connection, which sent nothing). nodes are the nodes one
	// by one, to check the cluster name of each; nil with one node.
	es    *elasticsearch.Client
	nodes []*elasticsearch.Client
	tribe *elasticsearch.Client // nil without tribe_url
	net   adapter.Deadlines
	// client makes a client for another node (of another member cluster
	// of the tribe), with the same transport and no credentials: they only
	// ever go to the nodes the specs name.
	client func(addr string) (*elasticsearch.Client, error)
}

// Options are how a cluster is opened.
type Options struct {
	// Env reads the environment: ELASTICSEARCH_URL and the credentials.
	Env func(string) string
	// Deadlines bound every request to the cluster and its tribe node
	// (DefaultDeadlines when zero).
	Deadlines adapter.Deadlines
	// Mode is the plan's. A destroy opens no cluster without Prune: it
	// leaves the project's indices, which hold data (destroy without
	// -indices).
	Mode plans.Mode
	// Prune makes the plan delete the project's indices that the specs no
	// longer declare (apply -prune-indices) and a destroy delete them all
	// (-indices); without it they are kept and the plan warns.
	Prune bool
}

// RemoveIndices is Prune's name where a run gives what it removes of the
// data its backends keep unless asked (plans.Removal), which a destroy
// plan records: {"indices": true}.
const RemoveIndices = "indices"

var _ provision.Backend = (*Backend)(nil)

// scope is what a backend reads, saved in a plan to read the same again.
type scope struct {
	Project     string   `json:"project"`
	ClusterName string   `json:"cluster_name"`
	Indices     []string `json:"indices"`
	TribeURL    string   `json:"tribe_url,omitempty"`
}

// New returns one backend per search block that has declared indices, in
// name order. The nodes are the block's url or urls, else the
// comma-separated ELASTICSEARCH_URL;
// credentials come only from the environment: ELASTICSEARCH_USERNAME and
// ELASTICSEARCH_PASSWORD, or ELASTICSEARCH_API_KEY, and the CA from
// ELASTICSEARCH_CA_CERT.
func New(cfg *schema.Config, o Options) ([]provision.Backend, hcl.Diagnostics) {
	if o.Mode == plans.Destroy && !o.Prune {
		return nil, nil
	}
	env := o.Env
	var out []provision.Backend
	var diags hcl.Diagnostics
	indices, documents := Indices(cfg), Documents(cfg)
	searches := append([]*Search(nil), Searches(cfg)...)
	sort.Slice(searches, func(i, j int) bool { return searches[i].Name < searches[j].Name })
	for _, s := range searches {
		t := target{cfg: cfg, project: cfg.Project, search: s, backend: "search." + s.Name, prune: o.Prune}
		if len(Searches(cfg)) > 1 {
			t.in = t.backend
		}
		for _, ix := range indices {
			t.declared = append(t.declared, ix.Name)
		}
		sc := scope{Project: cfg.Project, ClusterName: s.ClusterName, TribeURL: s.TribeURL}
		for _, ix := range indices {
			if ix.Search == s.Name {
				for _, d := range documents {
					if d.Index == ix.Name {
						t.documents = append(t.documents, d)
					}
				}
				t.indices = append(t.indices, withMarkFields(ix, documents))
				sc.Indices = append(sc.Indices, ix.Name)
			}
		}
		for _, im := range cfg.ImportsOf(Index, Document) {
			switch {
			case im.Declared || len(Searches(cfg)) != 1:
			case im.Kind == Index:
				t.generate = append(t.generate, im)
				sc.Indices = append(sc.Indices, im.Name)
			case im.Kind == Document:
				t.generate = append(t.generate, im)
				if ix := splitDocPath(im.Name).Index; !slices.Contains(sc.Indices, ix) {
					sc.Indices = append(sc.Indices, ix)
				}
			}
		}
		// A removed block of an index or a document is planned on the one
		// search cluster, also when the specs declare no index there; a
		// removed document's index is read for it.
		removing := false
		for _, r := range cfg.RemovedOfKinds(Index, Document) {
			if len(Searches(cfg)) != 1 {
				continue
			}
			removing = true
			if r.Kind != Document {
				continue
			}
			ref := splitDocPath(r.Name)
			t.removed = append(t.removed, ref)
			if !slices.Contains(sc.Indices, ref.Index) {
				sc.Indices = append(sc.Indices, ref.Index)
			}
		}
		if len(sc.Indices) == 0 && !removing {
			continue
		}
		raw := s.URLs
		if len(raw) == 0 && env("ELASTICSEARCH_URL") != "" {
			raw = splitURLs(env("ELASTICSEARCH_URL"))
		}
		if len(raw) == 0 {
			raw = []string{DefaultURL}
		}
		b, err := open(raw, sc, env)
		if err != nil {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid search settings",
				Detail:   fmt.Sprintf("The Elasticsearch client cannot be set up: %s.", err),
				Subject:  s.URLRange.Ptr(),
			})
			continue
		}
		t.where = strings.Join(b.urls, ", ")
		b.target, b.net = t, o.Deadlines.OrDefault()
		out = append(out, b)
	}
	return out, diags
}

// DefaultURL is the node a search block without url or urls reads, when
// ELASTICSEARCH_URL is not set: the default of Elastic's Go client
// (elastic/go-elasticsearch, "http://localhost:9200"), as the local
// agent is Consul's.
const DefaultURL = "http://127.0.0.1:9200"

// splitURLs splits ELASTICSEARCH_URL's comma-separated list of nodes, as
// the Elasticsearch clients do; a comma not followed by a scheme belongs
// to the URL before it (a password may hold one).
func splitURLs(list string) []string {
	var out []string
	for _, part := range strings.Split(list, ",") {
		p := strings.TrimSpace(part)
		if len(out) > 0 && !strings.HasPrefix(p, "http://") && !strings.HasPrefix(p, "https://") {
			out[len(out)-1] += "," + part
			continue
		}
		out = append(out, p)
	}
	return out
}

// userinfo is the credentials of a URL, never quoted in an error.
var userinfo = regexp.MustCompile(`//[^/@]*@`)

func open(raw []string, sc scope, env func(string) string) (*Backend, error) {
	b := &Backend{scope: sc}
	user, pass := env("ELASTICSEARCH_USERNAME"), env("ELASTICSEARCH_PASSWORD")
	for _, r := range raw {
		u, err := url.Parse(r)
		if err != nil || u.Host == "" {
			return nil, fmt.Errorf("%q is not a URL", userinfo.ReplaceAllString(r, "//(credentials)@"))
		}
		if u.User != nil { // from ELASTICSEARCH_URL: the environment may hold them
			user = u.User.Username()
			pass, _ = u.User.Password()
			u.User = nil
		}
		b.urls = append(b.urls, strings.TrimSuffix(u.String(), "/"))
		if user != "" || pass != "" || env("ELASTICSEARCH_API_KEY") != "" {
			if err := adapter.Allowed(u.String(), env); err != nil {
				return nil, fmt.Errorf("the cluster %w", err)
			}
		}
	}
	// One transport, whatever the TLS settings: the deadlines are the
	// requests' contexts, never a transport setting a CA could drop.
	transport := &http.Transport{Proxy: http.ProxyFromEnvironment, TLSClientConfig: &tls.Config{MinVersion: tls.VersionTLS12}}
	if ca := env("ELASTICSEARCH_CA_CERT"); ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return nil, fmt.Errorf("reading ELASTICSEARCH_CA_CERT: %w", err)
		}
		transport.TLSClientConfig.RootCAs = x509.NewCertPool()
		if !transport.TLSClientConfig.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("ELASTICSEARCH_CA_CERT (%s) holds no PEM certificate", ca)
		}
	}
	apiKey := env("ELASTICSEARCH_API_KEY")
	newClient := func(addrs []string, user, pass, apiKey string) (*elasticsearch.Client, error) {
		return elasticsearch.NewClient(elasticsearch.Config{
			Addresses: addrs,
			Username:  user,
			Password:  pass,
			APIKey:    apiKey,
			// Retries are the engine's (Deadlines.Call); a tribe node's 503
			// must fail at once, not four times.
			DisableRetry: true,
			Transport:    sentOnce{transport},
		})
	}
	client := func(addrs ...string) (*elasticsearch.Client, error) { return newClient(addrs, user, pass, apiKey) }
	// A node the specs do not name (a member the tribe node reports) gets
	// no credentials.
	b.client = func(addr string) (*elasticsearch.Client, error) { return newClient([]string{addr}, "", "", "") }
	var err error
	if b.es, err = client(b.urls...); err != nil {
		return nil, err
	}
	if len(b.urls) > 1 {
		for _, u := range b.urls {
			node, err := client(u)
			if err != nil {
				return nil, err
			}
			b.nodes = append(b.nodes, node)
		}
	}
	if sc.TribeURL != "" {
		if b.tribe, err = client(sc.TribeURL); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// sentOnce is the clients' transport: the Elasticsearch client sends a
// request again when the answer ends in io.EOF, even with DisableRetry
// (go-elasticsearch 7.13's estransport), and a PUT /<index>/ whose node
// died before it answered then comes back "index_already_exists". The
// EOF is wrapped (as *url.Error, which errors.Is still sees through), so
// that whether to send again is the engine's decision (Deadlines.Call).
type sentOnce struct{ http.RoundTripper }

func (t sentOnce) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.RoundTripper.RoundTrip(req)
	if err == io.EOF {
		err = &url.Error{Op: req.Method, URL: req.URL.Redacted(), Err: err}
	}
	return resp, err
}

// Info names the cluster by the search block and its write URL.
func (b *Backend) Info() plans.BackendInfo {
	return plans.BackendInfo{Name: b.target.backend, Kind: "search", Address: strings.Join(b.urls, ","), Scope: adapter.RawJSON(b.scope)}
}

// read gathers the facts of a plan, in two rounds of requests side by
// side: the node (GET /) and whether it is a tribe node (its settings);
// then the declared indices, and after them their documents, beside the
// marks of every index.
func (b *Backend) read(ctx context.Context) (facts, error) {
	var f facts
	var root struct {
		ClusterName string `json:"cluster_name"`
		Tagline     string `json:"tagline"`
		Version     struct {
			Number       string `json:"number"`
			Distribution string `json:"distribution"`
		} `json:"version"`
	}
	var members map[string]string
	var tribeErr error
	if err := parallel.All(ctx, func(ctx context.Context) error { return b.get(ctx, b.es, "/", &root) },
		func(ctx context.Context) error {
			// Its failure is reported only of a version the plan reads.
			members, _, tribeErr = b.tribeSettings(ctx, b.es)
			return nil
		},
		func(ctx context.Context) error {
			f.Nodes = b.readNodes(ctx)
			return nil
		}); err != nil {
		return f, err
	}
	f.Version, f.ClusterName, f.Distribution, f.Tagline = root.Version.Number, root.ClusterName, root.Version.Distribution, root.Tagline
	if unsupported(f) != "" {
		return f, nil // refused by the plan; its other APIs differ
	}
	if tribeErr != nil {
		return f, tribeErr
	}
	if len(members) > 0 {
		f.Tribe = members
		return f, nil // never read further through a tribe node
	}
	// Only the indices' and the documents' reads write f (each its own
	// field).
	major := f.major()
	var undeclared map[string]liveIndex
	err := parallel.All(ctx, func(ctx context.Context) error {
		// The documents are read once it is known which indices are red:
		// a search of a red index's documents fails as a whole.
		var red map[string][]int
		if err := parallel.All(ctx, func(ctx context.Context) error { return b.readIndices(ctx, &f) },
			func(ctx context.Context) (err error) {
				red, err = b.readRed(ctx)
				return err
			}); err != nil {
			return err
		}
		f.Red = red
		return b.readDocuments(ctx, &f)
	}, func(ctx context.Context) (err error) {
		undeclared, err = b.readUndeclared(ctx, major)
		return err
	})
	f.Undeclared = slices.Sorted(maps.Keys(undeclared))
	if len(undeclared) > 0 && err == nil {
		f.UndeclaredMarks = undeclared
		err = b.readHeld(ctx, &f)
	}
	return f, err
}

// readRed reads which of the indices in scope are red, and which of
// their primary shards have no copy allocated (a node down, an
// allocation that cannot be made): the cluster's status first (a cluster
// is red when an index is), and only when it is red its health by shard
// in one answer (filtered to the statuses), which grows with the
// cluster's shards; writes into them fail, or wait out their timeout,
// until those come back. An index just created is red for a moment,
// until its primaries are allocated: when one is red, the read waits for
// the cluster to be yellow, up to a second (Elasticsearch answers 408
// when it is not), and asks again. nil when none is red.
func (b *Backend) readRed(ctx context.Context) (map[string][]int, error) {
	var cluster struct {
		Status string `json:"status"`
	}
	if err := b.get(ctx, b.es, "/_cluster/health?filter_path=status", &cluster); err != nil || cluster.Status != "red" {
		return nil, err
	}
	red, err := b.redShards(ctx)
	if err != nil || len(red) == 0 {
		return red, err
	}
	var wait struct{}
	var se *adapter.StatusError
	if err := b.get(ctx, b.es, "/_cluster/health?wait_for_status=yellow&timeout=1s&filter_path=status", &wait); err != nil && (!errors.As(err, &se) || se.Code != http.StatusRequestTimeout) {
		return nil, err
	}
	return b.redShards(ctx)
}

// redShards is one read of readRed: the red indices in scope, each with
// its primaries that are neither active nor initializing.
func (b *Backend) redShards(ctx context.Context) (map[string][]int, error) {
	var health struct {
		Indices map[string]struct {
			Status string `json:"status"`
			Shards map[string]struct {
				PrimaryActive bool `json:"primary_active"`
				Initializing  int  `json:"initializing_shards"`
			} `json:"shards"`
		} `json:"indices"`
	}
	if err := b.get(ctx, b.es, "/_cluster/health?level=shards&filter_path=indices.*.status,indices.*.shards.*.primary_active,indices.*.shards.*.initializing_shards", &health); err != nil {
		return nil, err
	}
	var red map[string][]int
	for _, name := range b.scope.Indices {
		ix, ok := health.Indices[name]
		if !ok || ix.Status != "red" {
			continue
		}
		var down []int
		for shard, s := range ix.Shards {
			if n, err := strconv.Atoi(shard); err == nil && !s.PrimaryActive && s.Initializing == 0 {
				down = append(down, n)
			}
		}
		if len(down) == 0 {
			continue // primaries coming up
		}
		if red == nil {
			red = map[string][]int{}
		}
		slices.Sort(down)
		red[name] = down
	}
	return red, nil
}

// readUndeclared reads the marks of every type of every index, to find
// the project's indices that the specs no longer declare (with the
// _meta of their types): a fixed, small answer.
func (b *Backend) readUndeclared(ctx context.Context, major int) (map[string]liveIndex, error) {
	var marks map[string]liveIndex
	path := "/_mapping?filter_path=*.mappings.*._meta"
	if major >= 7 {
		path += "&include_type_name=true"
	}
	if err := b.get(ctx, b.es, path, &marks); err != nil {
		return nil, err
	}
	undeclared := map[string]liveIndex{}
	for name, ix := range marks {
		imported := slices.ContainsFunc(b.generate, func(im *schema.Import) bool { return im.Kind == Index && im.Name == name })
		if indexOwner(ix, b.project) == b.project && !imported && !slices.Contains(b.declared, name) {
			undeclared[name] = ix
		}
	}
	return undeclared, nil
}

// readNodes asks each declared node, when there are several, which
// cluster it belongs to, side by side: once each, since a node that does
// not answer is a warning, not a failure (the others serve).
func (b *Backend) readNodes(ctx context.Context) []nodeFact {
	if len(b.nodes) == 0 {
		return nil
	}
	out := make([]nodeFact, len(b.nodes))
	once := adapter.Deadlines{Request: b.net.Request, Attempts: 1, Backoff: b.net.Backoff}
	parallel.Do(len(b.nodes), len(b.nodes), func(i int) {
		c := b.nodes[i]
		n := nodeFact{URL: b.urls[i]}
		var root struct {
			ClusterName string `json:"cluster_name"`
		}
		err := once.Call(ctx, false, func(ctx context.Context) error {
			body, err := sender(c, once).Once(ctx, plans.Request{Method: http.MethodGet, Path: "/", Header: acceptJSON}, 1<<20)
			if err != nil {
				return err
			}
			return json.Unmarshal(body, &root)
		})
		if err != nil {
			n.Error = adapter.WithoutLocalAddrs(err.Error())
		}
		n.ClusterName = root.ClusterName
		out[i] = n
	})
	return out
}

// maxLine bounds the request line of a read: Elasticsearch refuses a
// line longer than http.max_initial_line_length, 4 KB by default.
const maxLine = 3 << 10

// readIndices reads the mappings and settings of the declared indices
// that exist: GET /<indices> in one request while their names fit in a
// request line, else GET /_mapping and GET /_settings of every index, two
// answers that grow with the cluster instead of a line that grows with
// the specs.
func (b *Backend) readIndices(ctx context.Context, f *facts) error {
	if len(b.scope.Indices) == 0 {
		f.Indices = map[string]liveIndex{}
		return nil
	}
	typeName := ""
	if f.major() >= 7 {
		typeName = "include_type_name=true"
	}
	path := "/" + strings.Join(b.scope.Indices, ",") + "?ignore_unavailable=true&flat_settings=true"
	if typeName != "" {
		path += "&" + typeName
	}
	if len(path) <= maxLine {
		return b.get(ctx, b.es, path, &f.Indices)
	}
	var mappings, settings map[string]liveIndex
	if err := b.get(ctx, b.es, "/_mapping?"+typeName, &mappings); err != nil {
		return err
	}
	if err := b.get(ctx, b.es, "/_settings?flat_settings=true", &settings); err != nil {
		return err
	}
	f.Indices = map[string]liveIndex{}
	for _, name := range b.scope.Indices {
		if ix, ok := mappings[name]; ok {
			ix.Settings = settings[name].Settings
			f.Indices[name] = ix
		}
	}
	return nil
}

// get performs a GET, retried as reads are, and decodes its JSON answer
// into v.
func (b *Backend) get(ctx context.Context, c *elasticsearch.Client, path string, v any) error {
	var body []byte
	err := b.net.Call(ctx, true, func(ctx context.Context) error {
		var err error
		body, err = b.perform(ctx, c, plans.Request{Method: http.MethodGet, Path: path, Header: acceptJSON}, 64<<20)
		return err
	})
	if err != nil {
		return fmt.Errorf("GET %s: %w", path, err)
	}
	return json.Unmarshal(body, v)
}

// perform sends one request once and returns the body of a 2xx answer,
// at most limit bytes; any other answer is a *adapter.StatusError
// quoting Elasticsearch's reason.
func (b *Backend) perform(ctx context.Context, c *elasticsearch.Client, r plans.Request, limit int64) ([]byte, error) {
	return sender(c, b.net).Once(ctx, r, limit)
}

// sender sends to a node through its client, which adds the node's
// address and the credentials; Elasticsearch's refusals are quoted.
func sender(c *elasticsearch.Client, d adapter.Deadlines) adapter.Sender {
	return adapter.Sender{
		Do:  c.Perform,
		Net: d,
		Refuse: func(code int, status string, body []byte) error {
			return &adapter.StatusError{Code: code, Message: "elasticsearch answered " + esError(status, body), Leaderless: masterless(code, body)}
		},
	}
}

// Read reads the cluster (its version, the declared indices, the
// documents, the project's marks) and, for a plan that converges, how its
// tribe node serves them.
func (b *Backend) Read(ctx context.Context, mode plans.Mode) (plans.State, hcl.Diagnostics) {
	f, err := b.read(ctx)
	if err != nil {
		return nil, hcl.Diagnostics{b.unreadable(err)}
	}
	if b.tribe != nil && mode == plans.Converge && !b.checkCluster(f).HasErrors() {
		f.TribeNode = b.readTribeNode(ctx)
	}
	b.keepDeclaredSettings(f)
	return f, nil
}

// keepDeclaredSettings leaves out of each index's settings those no
// index of the specs declares (index.uuid, index.creation_date,
// index.version.created, ...): the plan compares the declared ones only,
// and the rest would make a snapshot of one live state differ from a
// snapshot of another with the same declarations.
func (b *Backend) keepDeclaredSettings(f facts) {
	declared := map[string]bool{}
	for _, ix := range b.indices {
		for k := range ix.Settings {
			declared[k] = true
		}
	}
	for name, ix := range f.Indices {
		for k := range ix.Settings {
			if !declared[k] {
				delete(ix.Settings, k)
			}
		}
		if len(ix.Settings) == 0 {
			ix.Settings = nil
		}
		f.Indices[name] = ix
	}
}

// GreenfieldVersion is the Elasticsearch version a plan against nothing
// live assumes (provision test without a snapshot): the one provision is
// tested against.
const GreenfieldVersion = "2.4.1"

// Greenfield is the state of the declared cluster holding nothing.
func (b *Backend) Greenfield() plans.State {
	return facts{Version: GreenfieldVersion, ClusterName: b.search.ClusterName, Indices: map[string]liveIndex{}}
}

// DecodeState reads a cluster's state from its JSON form.
func (b *Backend) DecodeState(dec *json.Decoder) (plans.State, error) {
	var f facts
	if err := dec.Decode(&f); err != nil {
		return nil, err
	}
	return f, nil
}

// Plan gives the engine the cluster's indices and documents, as read, and
// the declared ones (the documents' once the indices are planned), and
// judges the cluster's health and the tribe node's view of them.
func (b *Backend) Plan(st plans.State, mode plans.Mode) (provision.Planning, hcl.Diagnostics) {
	f := st.(facts)
	pl := provision.Planning{
		Project: b.project,
		Removed: b.cfg.Removed,
		Planned: plans.Planned{Fingerprint: plans.DigestWhenRead(func() string { return b.fingerprint(f) })},
	}
	warnings := b.checkCluster(f)
	if warnings.HasErrors() {
		return pl, warnings
	}
	fresh := b.fresh(f)
	pl.Kinds = []func([]*plans.Change) provision.Objects{
		func([]*plans.Change) provision.Objects { return b.indexObjects(f) },
		func(indices []*plans.Change) provision.Objects { return b.documentObjects(f, fresh, indices) },
	}
	pl.Finish = func(out *plans.Planned, failed bool) hcl.Diagnostics {
		orderDeletes(fresh, out.Changes)
		out.Changes = append(out.Changes, b.recordsGone(f)...)
		diags := b.redIndices(f, out.Changes)
		if note := unchecked(f, out.Changes); note != "" {
			out.Notes = append(out.Notes, note)
		}
		if r := f.TribeNode; r != nil && b.tribe != nil && mode == plans.Converge && !failed && !diags.HasErrors() {
			diags = append(diags, b.tribeDiagnostics(r)...)
			if r.Blocks != nil {
				if note := blocksNote(b.scope.TribeURL, r.Blocks.Write, r.Blocks.Metadata); note != "" {
					out.Notes = append(out.Notes, note)
				}
			}
		}
		return diags
	}
	return pl, warnings
}

// unchecked says, when the plan writes an index's mappings to a server
// whose mapping rules provision does not hold whole (5.x and later: only
// 2.x's were read off a real server, see rules.go), that its field
// parameters are the server's to judge; "" otherwise.
func unchecked(f facts, changes []*plans.Change) string {
	if f.major() < 5 {
		return ""
	}
	for _, c := range changes {
		if c.Addr.Kind == Index && (c.Action == plans.Create || c.Action == plans.Update) {
			return fmt.Sprintf("Elasticsearch %s: provision checks the field types and the types per index before sending, not each mapping parameter (it holds 2.x's rules whole only); the server judges those when the index's mappings are put.", f.Version)
		}
	}
	return ""
}

// unreadable is the diagnostic of a failed read of the cluster.
func (b *Backend) unreadable(err error) *hcl.Diagnostic {
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  "Cannot read the search cluster",
		Detail:   fmt.Sprintf("Reading %s failed: %s. Check that the node runs and that url, urls (or ELASTICSEARCH_URL) point at it.", b.where, err),
		Subject:  b.search.URLRange.Ptr(),
	}
}

// fingerprint digests what the cluster holds, less what lifecycle blocks
// ignore (a document's write is conditional on the version read, which its
// request holds); what its tribe node shows follows it and never makes a
// saved plan stale.
func (b *Backend) fingerprint(f facts) string {
	f.TribeNode, f.Nodes = nil, nil // a node that died or came back since is no change of the cluster
	ignoring := func(d liveDoc, lc schema.Lifecycle) liveDoc {
		for _, p := range sourcePaths(lc) {
			d.Source, d.Version = withPath(d.Source, nil, p), 0
		}
		return d
	}
	lifecycles := map[string]schema.Lifecycle{}
	for _, d := range b.documents {
		if d.Lifecycle.IgnoreAll || len(d.Lifecycle.Ignore) > 0 {
			lifecycles[d.Path()] = d.Lifecycle
		}
	}
	if len(lifecycles) > 0 {
		f.Documents, f.Owned = maps.Clone(f.Documents), slices.Clone(f.Owned)
		for path, lc := range lifecycles {
			if d, ok := f.Documents[path]; ok {
				f.Documents[path] = ignoring(d, lc)
			}
		}
		for i, d := range f.Owned {
			if lc, ok := lifecycles[d.path()]; ok {
				f.Owned[i] = ignoring(d, lc)
			}
		}
	}
	cloned := false
	for _, ix := range b.indices {
		kept := ignoringSettings(ix)
		live, ok := f.Indices[ix.Name]
		if !ok || kept == ix {
			continue
		}
		if !cloned {
			f.Indices, cloned = maps.Clone(f.Indices), true
		}
		live.Settings = maps.Clone(live.Settings)
		for k := range ix.Settings {
			if _, still := kept.Settings[k]; !still {
				delete(live.Settings, k)
			}
		}
		f.Indices[ix.Name] = live
	}
	return adapter.Digest(f)
}

// Send performs one planned request on the write URL, retried on a
// refused or reset connection or a 5xx when the plan made it idempotent
// (a mapping or settings PUT); the PUT that creates an index and a DELETE
// are sent once, since a repeat after a lost answer would fail on what the
// first one did.
func (b *Backend) Send(ctx context.Context, r plans.Request) error {
	_, err := sender(b.es, b.net).Send(ctx, r, 64<<10)
	return err
}

// esError quotes Elasticsearch's error type and reason.
// masterless says whether an answer is that the cluster has no elected
// master: 503 with master_not_discovered_exception (a node waited out the
// master timeout, 30 s unless the request says otherwise), a cluster
// block "no master" (SERVICE_UNAVAILABLE/2), or GET / answered 503 with
// the node's usual description (Elasticsearch 2.x's root says 503 while a
// global block is on; measured on 2.4.1, the master killed). Nothing was done; once a
// master is elected the same request succeeds. (A
// process_cluster_event_timeout_exception is not of this kind: the master
// queued the change and may still make it.)
func masterless(code int, body []byte) bool {
	if code != http.StatusServiceUnavailable {
		return false
	}
	s := string(body)
	return strings.Contains(s, "master_not_discovered_exception") || strings.Contains(s, "no master") || strings.Contains(s, `"tagline"`)
}

func esError(status string, body []byte) string {
	var e struct {
		Error struct {
			Type   string `json:"type"`
			Reason string `json:"reason"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) == nil && e.Error.Type != "" {
		return fmt.Sprintf("%s: %s: %s", status, e.Error.Type, e.Error.Reason)
	}
	return fmt.Sprintf("%s: %s", status, strings.TrimSpace(string(body)))
}

// Verify waits, a few seconds at most, until every index the changes
// wrote shows through the tribe node with all its declared types, and
// checks that the copy the tribe node serves is the declared cluster's,
// not another member's of the same name.
func (b *Backend) Verify(ctx context.Context, p *plans.Plan) ([]provision.Proof, hcl.Diagnostics) {
	changes := p.ChangesOf(b.target.backend)
	var lines []provision.Proof
	for _, check := range []func(context.Context, []*plans.Change) (string, error){b.verify, b.verifyTribeDocuments} {
		line, err := check(ctx, changes)
		if err != nil {
			return lines, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Not what the readers see",
				Detail: fmt.Sprintf("Every request succeeded, but %s: %s. What was written is live on the cluster; the dashboard tool, which reads through the tribe node, does not see it.", b.target.backend, err)}}
		}
		if line != "" {
			lines = append(lines, provision.Proof{Line: line})
		}
	}
	return lines, nil
}

// verifyTribeDocuments proves the written documents through the tribe
// node, when there is one.
func (b *Backend) verifyTribeDocuments(ctx context.Context, changes []*plans.Change) (string, error) {
	if b.tribe == nil {
		return "", nil
	}
	return b.verifyDocuments(ctx, changes)
}

func (b *Backend) verify(ctx context.Context, changes []*plans.Change) (string, error) {
	if b.tribe == nil || len(changes) == 0 {
		return "", nil
	}
	want := map[string][]string{}
	var names []string
	for _, c := range changes {
		if c.Action == plans.Delete || c.Addr.Kind != Index {
			continue
		}
		var after struct {
			Mappings map[string]any `json:"mappings"`
		}
		_ = json.Unmarshal(c.After.JSON(), &after)
		for t := range after.Mappings {
			want[c.Addr.Name] = append(want[c.Addr.Name], t)
		}
		names = append(names, c.Addr.Name)
	}
	if len(names) == 0 {
		return "", nil
	}
	deadline := time.Now().Add(10 * time.Second)
	var missing []string
	for {
		live, err := b.tribeState(ctx, names)
		missing = missing[:0]
		for _, n := range names {
			for _, t := range want[n] {
				if _, ok := live[n].Mappings[t]; err != nil || !ok {
					missing = append(missing, n+"/"+t)
				}
			}
		}
		if len(missing) == 0 {
			break
		}
		if time.Now().After(deadline) {
			err := fmt.Errorf("not visible through the tribe node %s after 10s: %s", b.scope.TribeURL, strings.Join(missing, ", "))
			if v, rerr := b.readTribe(ctx, names); rerr == nil && len(v.Copies) > 0 {
				err = fmt.Errorf("%w; another member holds an index of the same name and %s", err, conflictMeaning(v.OnConflict))
			}
			return "", err
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	ours, err := b.servedCheck(ctx, names)
	if err != nil {
		return "", err
	}
	// What the dashboard tool does through the tribe: a search.
	var found struct {
		Shards struct {
			Total int `json:"total"`
		} `json:"_shards"`
		Hits struct {
			Total int `json:"total"`
		} `json:"hits"`
	}
	if err := b.get(ctx, b.tribe, "/"+strings.Join(names, ",")+"/_search?size=0", &found); err != nil {
		return "", fmt.Errorf("a search through the tribe node %s failed: %w", b.scope.TribeURL, err)
	}
	types := 0
	for _, ts := range want {
		types += len(ts)
	}
	line := fmt.Sprintf("%s: %s and %d mapping %s are visible through the tribe node %s, served from %s's copy; a search there answers from %d %s (%d %s)",
		b.target.backend, quoteAll(names), types, plans.Plural(types, "type"), b.scope.TribeURL, ours, found.Shards.Total, plans.Plural(found.Shards.Total, "shard"), found.Hits.Total, plans.Plural(found.Hits.Total, "document"))
	if write, metadata, err := b.tribeBlocks(ctx); err == nil && (write || metadata) {
		line += "; " + blockedWords(write, metadata)
	}
	return line + ".", nil
}
