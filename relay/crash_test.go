package relay

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fasthttp/websocket"
	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/internal/testkit"
)

// TestCrash_AcknowledgedEventsSurviveSIGKILL builds the real binary, runs
// `agentnode serve` on one data directory and, over several rounds, has
// publishers on several connections write continuously while the node is
// killed with SIGKILL at a random moment. After each restart every event
// that was answered OK true must be stored: the same count and the same ids.
func TestCrash_AcknowledgedEventsSurviveSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills the binary")
	}
	bin := buildNode(t)
	data := t.TempDir()
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	acked := newAckSet()
	const rounds = 4
	for round := range rounds {
		node := startNode(t, bin, data)
		verifyAcked(t, node.url, acked, round)
		before := acked.len()
		stop := publishUntilStopped(node.url, acked, 4, 8)
		time.Sleep(time.Duration(150+rng.IntN(600)) * time.Millisecond) // the random moment of the kill
		node.kill(t)
		stop()
		if acked.len() == before {
			t.Fatalf("round %d: no event was acknowledged before the kill\n%s", round, node.logs.String())
		}
		t.Logf("round %d: %d events acknowledged so far", round, acked.len())
	}
	node := startNode(t, bin, data)
	verifyAcked(t, node.url, acked, rounds)
	node.kill(t)
}

// buildNode builds ./cmd/agentnode into a temporary directory.
func buildNode(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "agentnode")
	cmd := exec.Command("go", "build", "-tags", "libsecp256k1", "-o", bin, "./cmd/agentnode")
	cmd.Dir = filepath.Dir(strings.TrimSpace(string(out)))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/agentnode: %v\n%s", err, out)
	}
	return bin
}

// node is a running `agentnode serve`.
type node struct {
	url    string
	cmd    *exec.Cmd
	logs   *bytes.Buffer
	exited chan struct{}
}

// startNode starts the binary on a free port and waits until it accepts
// websocket connections.
func startNode(t *testing.T, bin, data string) *node {
	t.Helper()
	return startNodeArgs(t, bin, data)
}

// startNodeArgs is startNode with more serve arguments (--postgres URL).
func startNodeArgs(t *testing.T, bin, data string, extra ...string) *node {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	n := &node{url: "ws://" + addr, logs: &bytes.Buffer{}, exited: make(chan struct{})}
	n.cmd = exec.Command(bin, append([]string{"serve", "--listen", addr, "--data", data, "--log-level", "warn"}, extra...)...)
	n.cmd.Env = append(os.Environ(), "AGENTNODE_PASSPHRASE=crash-test")
	n.cmd.Stdout, n.cmd.Stderr = n.logs, n.logs
	if err := n.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { n.cmd.Wait(); close(n.exited) }()
	t.Cleanup(func() { // after the kill below (cleanups run last first): the output is complete
		if t.Failed() {
			t.Logf("agentnode serve's output:\n%s", n.logs.String())
		}
	})
	t.Cleanup(func() { n.cmd.Process.Kill(); <-n.exited })
	testkit.WaitFor(t, 30*time.Second, "agentnode serve answering on "+addr, func() bool {
		select {
		case <-n.exited:
			t.Fatal("agentnode serve exited")
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		c, err := nostr.RelayConnect(ctx, n.url)
		if err != nil {
			return false
		}
		c.Close()
		return true
	})
	return n
}

// kill sends SIGKILL and waits for the process to go.
func (n *node) kill(t *testing.T) {
	t.Helper()
	n.cmd.Process.Kill()
	<-n.exited
}

// ackSet is the ids answered OK true, across rounds.
type ackSet struct {
	mu  sync.Mutex
	ids []string
}

func newAckSet() *ackSet { return &ackSet{} }

func (a *ackSet) add(id string) { a.mu.Lock(); a.ids = append(a.ids, id); a.mu.Unlock() }
func (a *ackSet) len() int      { a.mu.Lock(); defer a.mu.Unlock(); return len(a.ids) }
func (a *ackSet) all() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.ids...)
}

// publishUntilStopped runs conns raw websocket connections, each keeping
// inFlight events unanswered, sending fresh signed events until the
// connection fails (the node was killed) or stop is called; stop waits.
// Only an explicit ["OK", id, true] counts: go-nostr's Publish returns nil
// when the connection drops before the answer, so it is not used here.
func publishUntilStopped(url string, acked *ackSet, conns, inFlight int) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range conns {
		conn, _, err := websocket.DefaultDialer.Dial(url, nil)
		if err != nil {
			continue
		}
		slots := make(chan struct{}, inFlight)
		wg.Add(2)
		go func() { defer wg.Done(); readOKs(conn, acked, slots) }()
		go func() { defer wg.Done(); defer conn.Close(); sendEvents(ctx, conn, slots) }()
	}
	return func() { cancel(); wg.Wait() }
}

// sendEvents writes signed events while a slot is free, until ctx ends or
// a write fails.
func sendEvents(ctx context.Context, conn *websocket.Conn, slots chan struct{}) {
	sk := nostr.GeneratePrivateKey()
	for i := 0; ; i++ {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return
		}
		evt := nostr.Event{Kind: 1, CreatedAt: nostr.Now(), Content: fmt.Sprintf("crash test %d", i)}
		evt.Sign(sk)
		msg, _ := nostr.EventEnvelope{Event: evt}.MarshalJSON()
		if conn.WriteMessage(websocket.TextMessage, msg) != nil {
			return
		}
	}
}

// readOKs records every OK true and frees a slot per answer, until the
// connection fails.
func readOKs(conn *websocket.Conn, acked *ackSet, slots chan struct{}) {
	for {
		_, msg, err := conn.ReadMessage()
		if err != nil {
			return
		}
		if ok, isOK := parseFrame(msg).(*nostr.OKEnvelope); isOK {
			if ok.OK {
				acked.add(ok.EventID)
			}
			<-slots
		}
	}
}

// verifyAcked checks that every acknowledged id is stored.
func verifyAcked(t *testing.T, url string, acked *ackSet, round int) {
	t.Helper()
	ids := acked.all()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := nostr.RelayConnect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	found := map[string]bool{}
	for chunk := range slicesChunk(ids, 500) {
		evts, err := c.QuerySync(ctx, nostr.Filter{IDs: chunk, Limit: len(chunk)})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evts {
			found[e.ID] = true
		}
	}
	var missing []string
	for _, id := range ids {
		if !found[id] {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 || len(found) != len(ids) {
		t.Fatalf("after restart %d: %d of %d acknowledged events stored; missing e.g. %v",
			round, len(found), len(ids), missing[:min(3, len(missing))])
	}
}

// slicesChunk yields consecutive chunks of at most n.
func slicesChunk(ids []string, n int) func(func([]string) bool) {
	return func(yield func([]string) bool) {
		for len(ids) > 0 {
			k := min(n, len(ids))
			if !yield(ids[:k]) {
				return
			}
			ids = ids[k:]
		}
	}
}
