package schema

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/hashicorp/hcl/v2"
)

// SensitiveKey matches the names whose values are secrets: object keys in
// a plan, query parameters of a URL.
var SensitiveKey = regexp.MustCompile(`(?i)(token|secret|passw(or)?d|api[-_]?key|credential|authorization)`)

// credentials says whether a URL of a spec carries credentials: user
// information, or a query parameter named like a secret.
func Credentials(s string) bool {
	u, err := url.Parse(s)
	if err != nil {
		return strings.Contains(s, "@")
	}
	if u.User != nil {
		return true
	}
	for k := range u.Query() {
		if SensitiveKey.MatchString(k) {
			return true
		}
	}
	return false
}

// noCredentials refuses a URL with credentials at attr: specs are
// committed and plans are shared.
func (d *decoder) noCredentials(attr *hcl.Attribute, s string) {
	if Credentials(s) {
		d.errorf(attr.Expr.Range(), attr.Range, "Credentials in a spec",
			"The URL in %s carries credentials (user information, or a query parameter named like a token, secret, password or key). Specs are committed, tags are public in Consul's catalog and plans are shared, so a secret has no place here. "+
				"Give the proxy or the check its credentials another way (a header set by the proxy, a file on the host); provision's own credentials come from the environment only.", attr.Name)
	}
}

// AbsoluteHTTPURL says what is wrong with s as an absolute http(s) URL.
func AbsoluteHTTPURL(s string) error {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return fmt.Errorf("is not a URL (%v)", err)
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("is not an http or https URL")
	case u.Host == "":
		return fmt.Errorf("has no host")
	}
	return nil
}
