package adapter

import "testing"

// TestAllowed: PROVISION_ALLOWED_SERVERS by host:port, host and CIDR;
// unset, every server.
func TestAllowed(t *testing.T) {
	env := func(list string) func(string) string {
		return func(k string) string {
			if k == AllowedServersEnv {
				return list
			}
			return ""
		}
	}
	for _, tt := range []struct {
		list, addr string
		ok         bool
	}{
		{"", "attacker.example:8500", true},
		{"127.0.0.1:8500", "127.0.0.1:8500", true},
		{"127.0.0.1:8500", "http://127.0.0.1:8500", true},
		{"127.0.0.1:8500", "127.0.0.1:8501", false},
		{"127.0.0.1:8500", "attacker.example:8500", false},
		{"consul.internal, 10.0.0.0/8", "https://consul.internal:8501", true},
		{"consul.internal, 10.0.0.0/8", "10.2.3.4:9200", true},
		{"consul.internal, 10.0.0.0/8", "http://11.0.0.1:9200", false},
		{"es.internal:9200", "http://es.internal:9200/", true},
		{"es.internal:443", "https://es.internal", true},
	} {
		if err := Allowed(tt.addr, env(tt.list)); (err == nil) != tt.ok {
			t.Errorf("%s allowed by %q: %v, want %t", tt.addr, tt.list, err, tt.ok)
		}
	}
}
