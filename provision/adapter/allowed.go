package adapter

import (
	"fmt"
	"net"
	"net/url"
	"strings"
)

// AllowedServersEnv names the servers provision may send a credential
// to: addresses (host:port, or a host for any port) and CIDRs,
// comma-separated. Unset, every server the specs name is allowed.
const AllowedServersEnv = "PROVISION_ALLOWED_SERVERS"

// Allowed says why a credential may not go to the server at address (a
// host:port or a URL), as PROVISION_ALLOWED_SERVERS limits it; nil when it
// may. A spec that names a server is written by whoever may open a pull
// request, and the pipeline plans it with the team's credentials: the
// limit is where those may go.
func Allowed(address string, getenv func(string) string) error {
	list := ""
	if getenv != nil {
		list = getenv(AllowedServersEnv)
	}
	if strings.TrimSpace(list) == "" {
		return nil
	}
	host, port := splitServer(address)
	ip := net.ParseIP(host)
	for _, e := range strings.Split(list, ",") {
		e = strings.TrimSpace(e)
		if _, n, err := net.ParseCIDR(e); err == nil {
			if ip != nil && n.Contains(ip) {
				return nil
			}
			continue
		}
		h, p := splitServer(e)
		if strings.EqualFold(h, host) && (p == "" || p == port) {
			return nil
		}
	}
	return fmt.Errorf("%s is not among the servers %s allows (%s): provision sends it no credential", host+portSuffix(port), AllowedServersEnv, list)
}

func portSuffix(port string) string {
	if port == "" {
		return ""
	}
	return ":" + port
}

// splitServer is the host and port of a host:port, a host or a URL (the
// port of its scheme when it names none).
func splitServer(s string) (host, port string) {
	if strings.Contains(s, "://") {
		if u, err := url.Parse(s); err == nil {
			host, port = u.Hostname(), u.Port()
			if port == "" {
				port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
			}
			return host, port
		}
	}
	if h, p, err := net.SplitHostPort(s); err == nil {
		return h, p
	}
	return strings.Trim(s, "[]"), ""
}
