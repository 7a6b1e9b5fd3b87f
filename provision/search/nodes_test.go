package search

import (
	"strings"
	"testing"

	"github.com/provision-dev/provision/schema"
)

// TestNodesFromEnvironment: ELASTICSEARCH_URL may name several nodes of a
// cluster, comma-separated as the Elasticsearch clients take it; the
// credentials of one never reach the backend's address.
func TestNodesFromEnvironment(t *testing.T) {
	cfg := &schema.Config{Project: "edge"}
	cfg.DeclarePlace(SearchPlace, &Search{PlaceDecl: schema.PlaceDecl{Name: "t1"}, ClusterName: "t1"})
	cfg.Declare(Index, &IndexDecl{Declaration: schema.Declaration{Name: "logs"}, Search: "t1"})
	env := map[string]string{"ELASTICSEARCH_URL": "http://a:9200, http://elastic:changeme@b:9200/"}
	backends, diags := New(cfg, Options{Env: func(k string) string { return env[k] }})
	if diags.HasErrors() || len(backends) != 1 {
		t.Fatalf("New: %v", diags)
	}
	b := backends[0].(*Backend)
	if got, want := b.Info().Address, "http://a:9200,http://b:9200"; got != want {
		t.Errorf("the address is %q, want %q", got, want)
	}
	if len(b.nodes) != 2 {
		t.Errorf("%d nodes to check one by one, want 2", len(b.nodes))
	}

	// A comma in a password is no separator: one node, as before.
	env["ELASTICSEARCH_URL"] = "http://elastic:s3cr,et@b:9200"
	backends, diags = New(cfg, Options{Env: func(k string) string { return env[k] }})
	if diags.HasErrors() || len(backends) != 1 {
		t.Fatalf("New: %v", diags)
	}
	if got := backends[0].Info().Address; got != "http://b:9200" {
		t.Errorf("the address is %q, want http://b:9200", got)
	}
	// A bad entry is quoted without its credentials.
	env["ELASTICSEARCH_URL"] = "http://a:9200,http://elastic:s3cret@b:port"
	if _, diags = New(cfg, Options{Env: func(k string) string { return env[k] }}); !diags.HasErrors() || strings.Contains(diags.Error(), "s3cret") {
		t.Errorf("a bad node's diagnostic: %v", diags)
	}
}
