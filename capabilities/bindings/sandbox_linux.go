package bindings

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// sandboxArg0 is the argv[0] by which a binary re-executed for a
// sandboxed server knows to set the limits and exec the server
// (SandboxExecMain).
const sandboxArg0 = "agentnode-mcp-sandbox"

// selfExec: this binary's main called SandboxExecMain, so a sandboxed
// server is started through it (limits set before the server's execve),
// not limited after its start with prlimit(2).
var selfExec atomic.Bool

// SandboxExecMain is to be the first call of main (and of TestMain) in a
// binary that runs sandboxed MCP servers. Normally it returns at once
// and records that the binary can re-execute itself; started by
// startSandboxed as sandboxArg0, it sets the limits with setrlimit(2)
// and becomes the server with execve(2), so the server never runs
// without them. It never returns then (exit 127 on a failure).
func SandboxExecMain() {
	if len(os.Args) == 0 || os.Args[0] != sandboxArg0 {
		selfExec.Store(true)
		return
	}
	err := execLimited(os.Args[1:])
	fmt.Fprintf(os.Stderr, "%s: %v\n", sandboxArg0, err)
	os.Exit(127)
}

// selfExecArgs is the argv that has this binary set l and exec path argv.
func selfExecArgs(l Limits, path string, argv []string) []string {
	args := []string{sandboxArg0}
	for _, r := range rlimits(l) {
		args = append(args, strconv.FormatUint(r.v, 10))
	}
	return append(append(args, path), argv...)
}

// execLimited reads selfExecArgs's tail: four limits, the path, argv.
func execLimited(args []string) error {
	rs := rlimits(Limits{})
	if len(args) < len(rs)+2 {
		return errors.New("want the limits, the program's path and its argv")
	}
	for i := range rs {
		v, err := strconv.ParseUint(args[i], 10, 64)
		if err != nil {
			return fmt.Errorf("limit %d: %w", i, err)
		}
		rs[i].v = v
	}
	if err := setLimits(0, rs); err != nil {
		return err
	}
	return unix.Exec(args[len(rs)], args[len(rs)+1:], os.Environ())
}

// rlimit is one resource and its value.
type rlimit struct {
	res int
	v   uint64
}

// rlimits are l's resources, in a fixed order.
func rlimits(l Limits) []rlimit {
	return []rlimit{
		{unix.RLIMIT_CPU, l.CPUSeconds},
		{unix.RLIMIT_AS, l.AddressSpace},
		{unix.RLIMIT_NOFILE, l.OpenFiles},
		{unix.RLIMIT_NPROC, l.Processes},
	}
}

// applyLimits sets l on the running process pid (prlimit(2): no
// privilege is needed to lower the limits of one's own child).
func applyLimits(pid int, l Limits) error {
	return setLimits(pid, rlimits(l))
}

// setLimits sets each soft and hard limit of pid (0: this process),
// never above the hard limit it has (raising one needs privilege).
func setLimits(pid int, rs []rlimit) error {
	for _, r := range rs {
		var old unix.Rlimit
		if err := unix.Prlimit(pid, r.res, nil, &old); err != nil {
			return err
		}
		v := min(r.v, old.Max)
		if err := unix.Prlimit(pid, r.res, &unix.Rlimit{Cur: v, Max: v}, nil); err != nil {
			return err
		}
	}
	return nil
}

// selfExecOK: SandboxExecMain was called in this binary.
func selfExecOK() bool { return selfExec.Load() }
