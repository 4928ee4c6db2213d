package pgtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// ErrNoBinaries means no PostgreSQL server binaries were found.
var ErrNoBinaries = errors.New("pgtest: no PostgreSQL server binaries (initdb, pg_ctl): run `make postgres` or apt-get install postgresql")

// cluster is one running throwaway server.
type cluster struct {
	bin  string // directory holding initdb and pg_ctl
	dir  string // temp dir: data/, sockets, log
	port int
	asPG bool // run commands as the postgres OS user
}

var (
	once    sync.Once
	shared  *cluster
	openErr error
	dbSeq   atomic.Int64
)

// Main runs the tests and then stops and removes the cluster, if one was
// started. Call it from TestMain: os.Exit(pgtest.Main(m)).
func Main(m *testing.M) int {
	code := m.Run()
	if shared != nil {
		shared.stop()
	}
	return code
}

// URL returns the URL of a new, empty database on the package's cluster,
// starting the cluster on first use. It skips t when PostgreSQL cannot run.
func URL(t testing.TB) string {
	t.Helper()
	once.Do(func() { shared, openErr = start() })
	if openErr != nil {
		t.Skipf("PostgreSQL tests skipped: %v", openErr)
	}
	name := fmt.Sprintf("t_%d", dbSeq.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, shared.url("postgres"))
	if err != nil {
		t.Fatalf("pgtest: connect: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("pgtest: create database: %v", err)
	}
	return shared.url(name)
}

func (c *cluster) url(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", c.port, db)
}

// start finds the binaries, runs initdb and starts the server.
func start() (*cluster, error) {
	bin, err := findBinaries()
	if err != nil {
		return nil, err
	}
	c := &cluster{bin: bin, asPG: os.Geteuid() == 0}
	if c.dir, err = os.MkdirTemp("", "pgtest-"); err != nil {
		return nil, err
	}
	if err := c.chown(); err != nil {
		c.remove()
		return nil, err
	}
	if err := c.run("initdb", "-D", c.data(), "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync"); err != nil {
		c.remove()
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		if err = c.startServer(); err == nil || attempt == 2 {
			break
		}
	}
	if err != nil {
		c.remove()
		return nil, err
	}
	return c, nil
}

func (c *cluster) data() string { return filepath.Join(c.dir, "data") }

// startServer starts postgres on a free port, sockets in the temp dir.
// fsync is off (the cluster is thrown away, and the machine is shared)
// unless PGTEST_FSYNC=on, for durable figures from benchmarks.
func (c *cluster) startServer() error {
	port, err := freePort()
	if err != nil {
		return err
	}
	c.port = port
	return c.startAt(port)
}

// startAt starts postgres on port (control.go restarts it there).
func (c *cluster) startAt(port int) error {
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c max_connections=200", port, c.dir)
	if os.Getenv("PGTEST_FSYNC") != "on" {
		opts += " -c fsync=off"
	}
	return c.run("pg_ctl", "-D", c.data(), "-l", filepath.Join(c.dir, "log"), "-o", opts, "-w", "-t", "60", "start")
}

// stop stops the server at once and removes its files.
func (c *cluster) stop() {
	_ = c.run("pg_ctl", "-D", c.data(), "-m", "immediate", "-w", "stop")
	c.remove()
}

func (c *cluster) remove() { _ = os.RemoveAll(c.dir) }

// chown hands the temp dir to the postgres user when running as root
// (initdb refuses to run as root).
func (c *cluster) chown() error {
	if !c.asPG {
		return nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return fmt.Errorf("pgtest: running as root and no postgres user: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return os.Chown(c.dir, uid, gid)
}

// run runs one of the server binaries, as the postgres user when root.
func (c *cluster) run(name string, args ...string) error {
	path := filepath.Join(c.bin, name)
	var cmd *exec.Cmd
	if c.asPG {
		cmd = exec.Command("runuser", append([]string{"-u", "postgres", "--", path}, args...)...)
	} else {
		cmd = exec.Command(path, args...)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("pgtest: %s: %w\n%s", name, err, out.String())
	}
	return nil
}

// findBinaries prefers Debian's newest /usr/lib/postgresql/N/bin, then PATH.
func findBinaries() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if isExec(filepath.Join(d, "initdb")) && isExec(filepath.Join(d, "pg_ctl")) {
			return d, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			d := filepath.Dir(real)
			if isExec(filepath.Join(d, "pg_ctl")) {
				return d, nil
			}
		}
	}
	return "", ErrNoBinaries
}

func version(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

func isExec(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode()&0o111 != 0
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
