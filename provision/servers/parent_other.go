//go:build !linux

package servers

import "syscall"

// dieWithParent does nothing: only Linux has a parent-death signal, so
// elsewhere a killed make bench or go test leaves its servers running.
func dieWithParent(*syscall.SysProcAttr) {}
