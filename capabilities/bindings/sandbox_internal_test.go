package bindings

import (
	"bufio"
	"errors"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// startSh starts a shell script sandboxed in a fresh dir (prlimit path:
// this test binary does not call SandboxExecMain).
func startSh(t *testing.T, sb Sandbox, script string) *sandboxProc {
	t.Helper()
	if sb.Dir == "" {
		sb.Dir = t.TempDir()
	}
	p, err := startSandboxed([]string{"sh", "-c", script}, sandboxEnv(sb.Dir, []string{"EXTRA=1"}), sb)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func TestSandbox_limitsEnvAndGroupKill(t *testing.T) {
	t.Setenv("AGENTNODE_TEST_SECRET", "hunter2")
	dir := t.TempDir()
	p := startSh(t, Sandbox{Dir: dir, Limits: Limits{OpenFiles: 64, CPUSeconds: 120}},
		`sleep 1000 & echo "$!"; echo "home=$HOME secret=${AGENTNODE_TEST_SECRET:-none} extra=$EXTRA cwd=$(pwd)"; exec cat`)
	lines := bufio.NewScanner(p.stdout)
	sleeper := nextLine(t, lines)
	if got, want := nextLine(t, lines), "home="+dir+" secret=none extra=1 cwd="+dir; got != want {
		t.Errorf("the child sees %q, want %q", got, want)
	}
	limits, err := os.ReadFile("/proc/" + strconv.Itoa(p.Pid()) + "/limits")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`Max open files\s+64\s+64`, `Max cpu time\s+120\s+120`, `Max address space\s+4294967296\s+4294967296`} {
		if !regexp.MustCompile(want).Match(limits) {
			t.Errorf("limits lack %s:\n%s", want, limits)
		}
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	waitGone(t, sleeper) // the group was killed: what the server forked too
}

func TestSandbox_boundsOutput(t *testing.T) {
	p := startSh(t, Sandbox{MessageBytes: 1000}, `head -c 5000 /dev/zero | tr '\000' a; exec cat`)
	if _, err := io.ReadAll(p.stdout); !errors.Is(err, errSandboxMessage) {
		t.Fatalf("reading a 5000-byte line under a 1000-byte bound: %v, want errSandboxMessage", err)
	}
	p = startSh(t, Sandbox{StderrBytes: 100}, `head -c 5000 /dev/zero >&2; exec cat`)
	p.Close()
	if n := len(p.Stderr()); n != 100 {
		t.Fatalf("kept %d bytes of stderr, want the first 100", n)
	}
}

func TestSandbox_commandOnTheChildsPath(t *testing.T) {
	_, err := startSandboxed([]string{"no-such-program-here"}, sandboxEnv(t.TempDir(), nil), Sandbox{Dir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "no-such-program-here") {
		t.Fatalf("start of a missing program: %v", err)
	}
}

func nextLine(t *testing.T, s *bufio.Scanner) string {
	t.Helper()
	if !s.Scan() {
		t.Fatalf("the child's stdout ended: %v", s.Err())
	}
	return s.Text()
}

// waitGone polls until pid is gone or a zombie (its reaper may not reap).
func waitGone(t *testing.T, pid string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		status, err := os.ReadFile("/proc/" + pid + "/status")
		if errors.Is(err, os.ErrNotExist) || regexp.MustCompile(`(?m)^State:\s+Z`).Match(status) {
			return
		}
	}
	t.Fatalf("process %s outlived its group's kill", pid)
}

func TestSandbox_failedStartSaysWhy(t *testing.T) {
	ep := MCPEndpoint{Command: []string{"sh", "-c", "echo 'missing API key' >&2; exit 3"}, Sandbox: &Sandbox{Dir: t.TempDir()}}
	_, err := connectMCP(t.Context(), ep, nil)
	if err == nil || !strings.Contains(err.Error(), "missing API key") {
		t.Fatalf("a server that exits at once: %v; want its stderr in the error", err)
	}
}
