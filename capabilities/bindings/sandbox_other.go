//go:build !linux

package bindings

import "errors"

// SandboxExecMain does nothing off Linux (see the Linux version).
func SandboxExecMain() {}

// selfExecArgs is not used off Linux.
func selfExecArgs(l Limits, path string, argv []string) []string { return nil }

// selfExecOK: never off Linux.
func selfExecOK() bool { return false }

// applyLimits needs Linux's prlimit(2): elsewhere a sandboxed server is
// refused rather than run without limits.
func applyLimits(pid int, l Limits) error {
	return errors.New("resource limits of MCP servers need Linux")
}
