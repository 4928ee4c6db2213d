//go:build !linux

package bindings

import "errors"

// applyLimits needs Linux's prlimit(2): elsewhere a sandboxed server is
// refused rather than run without limits.
func applyLimits(pid int, l Limits) error {
	return errors.New("resource limits of MCP servers need Linux")
}
