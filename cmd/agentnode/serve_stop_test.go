package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentnode/agentnode/internal/testkit"
)

// A stop (ctx cancelled: SIGTERM or ^C in main) at any moment of serve's
// startup ends `agentnode serve` promptly with nil (exit 0), with every
// goroutine it started ended, every file in its data directory closed and
// its port free.
func TestServe_stopDuringStartup(t *testing.T) {
	startup := fullStartup(t) // also starts what the process keeps for good (first-use globals)
	t.Logf("a full start takes %v here", startup)
	for seed := uint64(1); seed <= 20; seed++ {
		rnd := rand.New(rand.NewPCG(seed, 0))
		at := time.Duration(rnd.Int64N(int64(startup * 5 / 4))) // anywhere in the startup, or just after
		t.Run(fmt.Sprintf("seed %d", seed), func(t *testing.T) {
			before := goroutineIDs()
			addr, data := freeAddr(t), t.TempDir()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			served, logs := make(chan error, 1), &testkit.Buffer{}
			m := quietMain()
			m.Stderr = logs
			go func() {
				served <- m.Run(ctx, []string{"serve", "--listen", addr, "--data", data, "--log-level", "debug"})
			}()
			defer func() {
				if t.Failed() {
					t.Logf("serve's log:\n%s", logs.String())
				}
			}()
			time.AfterFunc(at, cancel)
			select {
			case err := <-served:
				if err != nil {
					t.Errorf("stop %v into the startup: serve returned %v, want nil", at, err)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("stop %v into the startup: serve has not returned within 10 s", at)
			}
			if ln, err := net.Listen("tcp", addr); err != nil {
				t.Errorf("stop %v into the startup: port still taken: %v", at, err)
			} else {
				ln.Close()
			}
			if leaked := waitGoroutinesEnd(before, 5*time.Second); leaked != "" {
				t.Errorf("stop %v into the startup: goroutines left behind:\n%s", at, leaked)
			}
			if open := openFilesIn(t, data); len(open) > 0 { // after the goroutines: one may be closing a file
				t.Errorf("stop %v into the startup: files still open: %q", at, open)
			}
		})
	}
}

// fullStartup serves a node until it answers HTTP, stops it and returns
// how long the start took.
func fullStartup(t *testing.T) time.Duration {
	t.Helper()
	addr := freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	start := time.Now()
	go func() {
		served <- quietMain().Run(ctx, []string{"serve", "--listen", addr, "--data", t.TempDir(), "--log-level", "error"})
	}()
	deadline := time.Now().Add(e2eWait)
	client := &http.Client{Timeout: time.Second}
	for {
		resp, err := client.Get("http://" + addr + "/") // answered once serve serves, not when it listens
		if err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("serve does not answer on %s: %v", addr, err)
		}
		time.Sleep(time.Millisecond) // polling a port: there is nothing to wait on
	}
	took := time.Since(start)
	cancel()
	if err := <-served; err != nil {
		t.Fatalf("serve stopped after a full start: %v", err)
	}
	return took
}

// quietMain is a Main that writes nowhere and reads no environment.
func quietMain() *Main {
	return &Main{Stdout: io.Discard, Stderr: io.Discard, Getenv: func(string) string { return "" }}
}

// freeAddr is a loopback address with a port free right now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// openFilesIn lists the files under dir this process holds open (Linux:
// /proc/self/fd; elsewhere nothing is checked).
func openFilesIn(t *testing.T, dir string) []string {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Logf("open files not checked: %v", err)
		return nil
	}
	var open []string
	for _, fd := range fds {
		target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name()))
		if err == nil && strings.HasPrefix(target, dir+string(filepath.Separator)) {
			open = append(open, target)
		}
	}
	return open
}

// goroutineHeader starts each goroutine's stack in a full dump.
var goroutineHeader = regexp.MustCompile(`(?m)^goroutine (\d+) `)

// goroutineIDs are the ids of the goroutines alive now.
func goroutineIDs() []string {
	var ids []string
	for _, m := range goroutineHeader.FindAllStringSubmatch(allStacks(), -1) {
		ids = append(ids, m[1])
	}
	return ids
}

// waitGoroutinesEnd polls until every goroutine not in before has ended and returns the stacks of those still
// alive at the deadline ("" if none).
func waitGoroutinesEnd(before []string, wait time.Duration) string {
	deadline := time.Now().Add(wait)
	for {
		var left []string
		for _, stack := range strings.Split(allStacks(), "\n\n") {
			m := goroutineHeader.FindStringSubmatch(stack)
			if m != nil && !slices.Contains(before, m[1]) {
				left = append(left, stack)
			}
		}
		if len(left) == 0 || time.Now().After(deadline) {
			return strings.Join(left, "\n\n")
		}
		time.Sleep(10 * time.Millisecond) // polling the runtime: there is nothing to wait on
	}
}

// allStacks is the stack dump of every goroutine.
func allStacks() string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return string(bytes.TrimSpace(buf[:n]))
		}
		buf = make([]byte, 2*len(buf))
	}
}
