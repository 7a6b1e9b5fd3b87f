package watch

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/provision-dev/provision/provision/consul"
	"github.com/provision-dev/provision/provision/langtest"
	"github.com/provision-dev/provision/provision/run"
	"github.com/provision-dev/provision/provision/search"
	"github.com/provision-dev/provision/schema"
)

// TestHealthzIdle: /healthz is stale after three polls and a minute of the
// specs in force; a watcher of Consul services only polls ten times less
// often (their change feeds see every change), so an idle one of those is
// not stale after three intervals, as it was.
func TestHealthzIdle(t *testing.T) {
	// Before the first reconcile: no specs in force yet, and stale.
	rec := httptest.NewRecorder()
	NewMetrics().Handler(New(Options{}, nil)).ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
	if rec.Code != http.StatusServiceUnavailable {
		t.Errorf("/healthz before the first reconcile: %d, want 503", rec.Code)
	}
	for _, c := range []struct {
		name string
		cfg  *schema.Config
		want int
	}{
		{"services only", withService(schema.NewConfig(langtest.Language)), http.StatusOK},
		{"a search cluster too", withService(withSearch(schema.NewConfig(langtest.Language))), http.StatusServiceUnavailable},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := New(Options{Interval: 30 * time.Second}, nil)
			w.specs = &run.Specs{Config: c.cfg}
			w.lastGood = time.Now().Add(-4 * time.Minute)
			rec := httptest.NewRecorder()
			NewMetrics().Handler(w).ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
			if rec.Code != c.want {
				t.Errorf("/healthz four minutes after the last good reconcile, polled every %s: %d, want %d", w.PollEvery(), rec.Code, c.want)
			}
		})
	}
}

// withService is cfg with one service declared.
func withService(cfg *schema.Config) *schema.Config {
	cfg.Declare(consul.Service, &consul.Decl{Declaration: schema.Declaration{Name: "a"}})
	return cfg
}

// withSearch adds a search block to cfg.
func withSearch(cfg *schema.Config) *schema.Config {
	cfg.DeclarePlace(search.SearchPlace, &search.Search{PlaceDecl: schema.PlaceDecl{Name: "t1"}})
	return cfg
}
