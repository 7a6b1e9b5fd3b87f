package search

import (
	"net/url"
	"slices"

	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/schema"
)

// SearchPlace is the place of a search cluster, search "<name>" { url =
// ...; cluster_name = ... }: one member cluster of a tribe, where writes
// go. Its package decodes it; the loader expands it as any place
// (for_each: search.<name>["<key>"]).
var SearchPlace = &schema.PlaceSchema{Type: "search", Label: "name", Decode: decodeSearch, Polled: true}

// Search is one instance of a search block.
type Search struct {
	schema.PlaceDecl
	// URLs are the nodes of the cluster provision reads and writes
	// through, whichever answers: the url attribute, or urls.
	URLs        []string
	ClusterName string
	TribeURL    string // optional; read-only, never written to
	URLRange    hcl.Range
}

// Searches are the search blocks' instances, in block and key order.
func Searches(cfg *schema.Config) []*Search { return schema.PlacesOf[*Search](cfg, SearchPlace.Type) }

var searchSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "url"}, {Name: "urls"}, {Name: "cluster_name", Required: true}, {Name: "tribe_url"}},
}

func decodeSearch(d schema.Decoder, b schema.Block) schema.Place {
	s := &Search{URLRange: b.DefRange}
	name := schema.InstanceName(b.Labels[0], b.Each)
	if !schema.PlaceLabel.MatchString(b.Labels[0]) {
		d.Errorf(b.LabelRanges[0], b.DefRange, "Invalid search name",
			"The name %q is the cluster's address (search.%s) in plans and -target; use letters, digits, \"_\" and \"-\", starting with a letter.", b.Labels[0], b.Labels[0])
	}
	c := d.Content(b.Body, searchSchema)
	one, many := c.Attributes["url"], c.Attributes["urls"]
	switch {
	case one != nil && many != nil:
		d.Errorf(many.NameRange, many.Range, "Both url and urls", "The search block %q sets url and urls. Name its nodes in urls alone.", name)
	case one != nil:
		s.URLRange = one.Expr.Range()
		if u := d.Str(one); u != "" {
			s.URLs = []string{u}
			checkSearchURL(d, one, u)
		}
	case many != nil:
		s.URLRange = many.Expr.Range()
		s.URLs = d.Strings(many)
		if len(s.URLs) == 0 {
			d.Errorf(many.Expr.Range(), many.Range, "No search URL", "urls names no node of the cluster %q.", name)
		}
		for i, u := range s.URLs {
			checkSearchURL(d, many, u)
			if slices.Contains(s.URLs[:i], u) {
				d.Errorf(many.Expr.Range(), many.Range, "Duplicate search URL", "urls names %s twice.", u)
			}
		}
	}
	if attr, ok := c.Attributes["tribe_url"]; ok {
		s.TribeURL = d.Str(attr)
		checkSearchURL(d, attr, s.TribeURL)
	}
	s.ClusterName = d.Str(c.Attributes["cluster_name"])
	return s
}

func checkSearchURL(d schema.Decoder, attr *hcl.Attribute, s string) {
	if s == "" {
		return
	}
	if err := schema.AbsoluteHTTPURL(s); err != nil {
		d.Errorf(attr.Expr.Range(), attr.Range, "Invalid search URL", "The URL %q %s.", s, err)
		return
	}
	if u, _ := url.Parse(s); u.User != nil {
		d.Errorf(attr.Expr.Range(), attr.Range, "Credentials in a spec",
			"The URL %s carries credentials. Specs are committed and plans are shared, so credentials come from the environment only: ELASTICSEARCH_USERNAME and ELASTICSEARCH_PASSWORD, or ELASTICSEARCH_API_KEY.", u.Redacted())
	}
}
