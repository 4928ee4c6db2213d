package bindings

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Sandbox is how a stdio MCP server of untrusted origin is run (a NIP-AD
// kind-4200 server the owner approved): as far as Linux allows without
// privileges. The child runs in Dir (HOME is Dir too), with no inherited
// environment but PATH and LANG (and the endpoint's Env), in its own
// process group (killed whole on stop), under Limits, with its
// stderr kept to StderrBytes and each stdout message to MessageBytes.
type Sandbox struct {
	Dir          string
	Limits       Limits
	StderrBytes  int // default 64 KiB; the rest is read and dropped
	MessageBytes int // default 8 MiB; a longer line ends the session
}

// Limits are resource limits of a sandboxed child (0 = the default).
// Processes is RLIMIT_NPROC, which Linux counts per user: it bounds the
// child's forks only while the node's user runs fewer processes.
type Limits struct {
	CPUSeconds   uint64 // RLIMIT_CPU, default 3600
	AddressSpace uint64 // RLIMIT_AS in bytes, default 4 GiB
	OpenFiles    uint64 // RLIMIT_NOFILE, default 256
	Processes    uint64 // RLIMIT_NPROC, default 256
}

// Sandbox defaults.
const (
	DefaultCPUSeconds   = 3600
	DefaultAddressSpace = 4 << 30
	DefaultOpenFiles    = 256
	DefaultProcesses    = 256
	DefaultStderrBytes  = 64 << 10
	DefaultMessageBytes = 8 << 20
	sandboxGrace        = 2 * time.Second // after stdin closes, before the group is killed
)

// withDefaults fills the zero limits.
func (l Limits) withDefaults() Limits {
	def := func(v *uint64, d uint64) {
		if *v == 0 {
			*v = d
		}
	}
	def(&l.CPUSeconds, DefaultCPUSeconds)
	def(&l.AddressSpace, DefaultAddressSpace)
	def(&l.OpenFiles, DefaultOpenFiles)
	def(&l.Processes, DefaultProcesses)
	return l
}

// errSandboxMessage is a stdout line over Sandbox.MessageBytes.
var errSandboxMessage = errors.New("bindings: the MCP server wrote a message over the sandbox's bound")

// sandboxEnv is the child's whole environment: PATH and LANG from the
// node, HOME = dir, then extra.
func sandboxEnv(dir string, extra []string) []string {
	env := []string{"HOME=" + dir}
	for _, k := range []string{"PATH", "LANG"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return append(env, extra...)
}

// startSandbox makes sb.Dir and starts argv in it under sb; the
// caller speaks MCP over the result's stdout and stdin (Write).
func startSandbox(argv, env []string, sb Sandbox) (*sandboxProc, error) {
	if err := os.MkdirAll(sb.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("bindings: sandbox dir: %w", err)
	}
	return startSandboxed(argv, sandboxEnv(sb.Dir, env), sb)
}

// sandboxProc is a running sandboxed child. Writing goes to its stdin;
// Close stops it (stdin closed, then SIGKILL to its group after the grace).
type sandboxProc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout io.ReadCloser
	stderr *boundedBuffer
	// errPipe is the read end of the child's stderr; copied closes when
	// the copy of it into stderr ends.
	errPipe *os.File
	copied  chan struct{}
	once    sync.Once
	err     error
}

// startSandboxed starts argv in its own process group under the limits:
// through this binary re-executed (SandboxExecMain: setrlimit, then the
// server's execve) when main called SandboxExecMain, else with
// prlimit(2) on the child right after its start.
func startSandboxed(argv, env []string, sb Sandbox) (*sandboxProc, error) {
	path, err := lookPathIn(argv[0], env)
	if err != nil {
		return nil, err
	}
	limits := sb.Limits.withDefaults()
	cmd := &exec.Cmd{Path: path, Args: argv, Env: env, Dir: sb.Dir,
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true}, WaitDelay: time.Second}
	if selfExecOK() { // the limits are set before the server's execve
		cmd.Path, cmd.Args = "/proc/self/exe", selfExecArgs(limits, path, argv)
	}
	p := &sandboxProc{cmd: cmd, stderr: &boundedBuffer{max: orInt(sb.StderrBytes, DefaultStderrBytes)}, copied: make(chan struct{})}
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	p.stdout = io.NopCloser(&lineBound{r: out, max: orInt(sb.MessageBytes, DefaultMessageBytes)})
	if err := p.start(argv[0]); err != nil {
		return nil, err
	}
	if selfExecOK() {
		return p, nil
	}
	if err := applyLimits(cmd.Process.Pid, limits); err != nil { // right after the start
		p.Close()
		return nil, fmt.Errorf("bindings: sandbox limits: %w", err)
	}
	return p, nil
}

// start starts the command with stderr on a pipe of its own, copied by
// a goroutine Close waits for (not by exec.Cmd, whose Wait would wait for
// whatever the server forked to close it).
func (p *sandboxProc) start(name string) error {
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	p.errPipe, p.cmd.Stderr = r, w
	err = p.cmd.Start()
	w.Close()
	if err != nil {
		r.Close()
		return fmt.Errorf("bindings: start %s: %w", name, err)
	}
	go func() {
		defer close(p.copied)
		io.Copy(p.stderr, r)
	}()
	return nil
}

// Pid is the child's process id.
func (p *sandboxProc) Pid() int { return p.cmd.Process.Pid }

func (p *sandboxProc) Write(b []byte) (int, error) { return p.stdin.Write(b) }

// Close stops the child: stdin closed, sandboxGrace to exit, then the
// whole process group killed; it waits for the child. A child that had to
// be killed is not an error (it was asked to stop).
func (p *sandboxProc) Close() error {
	p.once.Do(func() {
		p.stdin.Close()
		done := make(chan error, 1)
		go func() { done <- p.cmd.Wait() }()
		timer := time.NewTimer(sandboxGrace)
		defer timer.Stop()
		var err error
		select {
		case err = <-done:
			killGroup(p.cmd.Process.Pid) // what it left behind
		case <-timer.C:
			killGroup(p.cmd.Process.Pid)
			err = <-done
		}
		p.endStderr(timer)
		var exit *exec.ExitError                                                        // killed, or exited on its own: it was asked to stop
		if err != nil && !errors.As(err, &exit) && !errors.Is(err, exec.ErrWaitDelay) { // ErrWaitDelay: what it forked held its pipes (killed above)
			p.err = err
		}
	})
	return p.err
}

// endStderr waits for the stderr copy (every holder of the pipe is dead
// once the group is killed), at most until timer, then closes the pipe.
func (p *sandboxProc) endStderr(timer *time.Timer) {
	timer.Reset(sandboxGrace)
	select {
	case <-p.copied:
	case <-timer.C:
	}
	p.errPipe.Close()
	<-p.copied
}

// Stderr is what the child wrote to stderr, up to Sandbox.StderrBytes.
func (p *sandboxProc) Stderr() string { return p.stderr.String() }

// killGroup sends SIGKILL to the process group pgid (ESRCH: none left).
func killGroup(pgid int) { syscall.Kill(-pgid, syscall.SIGKILL) }

// lookPathIn finds name on the PATH of env (the child's, not the
// node's); a name with a slash is taken as it is (relative to the
// sandbox's Dir).
func lookPathIn(name string, env []string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	for _, kv := range env {
		if path, ok := strings.CutPrefix(kv, "PATH="); ok {
			for _, dir := range filepath.SplitList(path) {
				if f := filepath.Join(dir, name); isExecutable(f) && filepath.IsAbs(f) {
					return f, nil
				}
			}
		}
	}
	return "", fmt.Errorf("bindings: MCP server command %q: %w", name, exec.ErrNotFound)
}

// isExecutable: a regular file with an execute bit.
func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

func orInt(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}

// boundedBuffer keeps the first max bytes written and drops the rest.
type boundedBuffer struct {
	mu  sync.Mutex
	max int
	buf bytes.Buffer
}

func (b *boundedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if room := b.max - b.buf.Len(); room > 0 {
		b.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

func (b *boundedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// lineBound fails a read once a line (an MCP message) grows over max.
type lineBound struct {
	r    io.Reader
	max  int
	line int // bytes since the last newline
}

func (l *lineBound) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	for _, c := range p[:n] {
		l.line++
		if c == '\n' {
			l.line = 0
		}
		if l.line > l.max {
			return 0, errSandboxMessage
		}
	}
	return n, err
}

var _ io.WriteCloser = (*sandboxProc)(nil)
