//go:build tools

// Package tools pins the Consul agent that the tests and the demo run.
// Consul 1.15.4 is the last MPL-2.0 release; 1.17+ are BUSL.
package tools

import _ "github.com/hashicorp/consul"
