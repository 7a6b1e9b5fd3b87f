package schema

import (
	"net/url"
	"slices"

	"github.com/hashicorp/hcl/v2"
)

var searchSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "url"}, {Name: "urls"}, {Name: "cluster_name", Required: true}, {Name: "tribe_url"}},
}

func (d *decoder) searchBlock(b *hcl.Block) *Search {
	s := &Search{Name: b.Labels[0], DeclRange: b.DefRange, URLRange: b.DefRange}
	c := d.content(b.Body, searchSchema)
	one, many := c.Attributes["url"], c.Attributes["urls"]
	switch {
	case one != nil && many != nil:
		d.errorf(many.NameRange, many.Range, "Both url and urls", "The search block %q sets url and urls. Name its nodes in urls alone.", s.Name)
	case one != nil:
		s.URLRange = one.Expr.Range()
		if u := d.str(one); u != "" {
			s.URLs = []string{u}
			d.checkSearchURL(one, u)
		}
	case many != nil:
		s.URLRange = many.Expr.Range()
		s.URLs = d.strList(many)
		if len(s.URLs) == 0 {
			d.errorf(many.Expr.Range(), many.Range, "No search URL", "urls names no node of the cluster %q.", s.Name)
		}
		for i, u := range s.URLs {
			d.checkSearchURL(many, u)
			if slices.Contains(s.URLs[:i], u) {
				d.errorf(many.Expr.Range(), many.Range, "Duplicate search URL", "urls names %s twice.", u)
			}
		}
	}
	if attr, ok := c.Attributes["tribe_url"]; ok {
		s.TribeURL = d.str(attr)
		d.checkSearchURL(attr, s.TribeURL)
	}
	s.ClusterName = d.str(c.Attributes["cluster_name"])
	return s
}

func (d *decoder) checkSearchURL(attr *hcl.Attribute, s string) {
	if s == "" {
		return
	}
	if err := AbsoluteHTTPURL(s); err != nil {
		d.errorf(attr.Expr.Range(), attr.Range, "Invalid search URL", "The URL %q %s.", s, err)
		return
	}
	if u, _ := url.Parse(s); u.User != nil {
		d.errorf(attr.Expr.Range(), attr.Range, "Credentials in a spec",
			"The URL %s carries credentials. Specs are committed and plans are shared, so credentials come from the environment only: ELASTICSEARCH_USERNAME and ELASTICSEARCH_PASSWORD, or ELASTICSEARCH_API_KEY.", u.Redacted())
	}
}

// checkSearches reports search blocks declared twice.
func (d *decoder) checkSearches(cfg *Config) {
	unique(d, "Duplicate search block", "search", cfg.Searches, func(s *Search) (string, hcl.Range) { return s.Name, s.DeclRange })
}
