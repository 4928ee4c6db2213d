package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd/state"
	"github.com/agentnode/agentnode/internal/testkit"
)

// Three served nodes (B and C peering A) run one definition for one owner.
// C's only way to A goes through a TCP proxy the test cuts: while C is
// partitioned, A, B and C all edit the same documents concurrently (title,
// body, tags); once the proxy lets traffic through again, the three nodes
// converge to byte-identical documents that keep every node's tags.
func TestServe_ThreeNodesPartitionHeals(t *testing.T) {
	const docs, rounds = 3, 3
	cfg := filepath.Join(t.TempDir(), "serve.json")
	if err := os.WriteFile(cfg, []byte(`{"state": {"anti_entropy_seconds": 1}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a := startServe(t, "--config", cfg)
	link := startCutProxy(t, a.Addr())
	b := startServe(t, "--config", cfg, "--peer", "ws://"+a.Addr())
	c := startServe(t, "--config", cfg, "--peer", "ws://"+link.Addr())
	nodes := []*servedNode{a, b, c}

	authorSK := testkit.NewKey(t).SK
	ownerKey := testkit.NewKey(t)
	ownerSK, owner := ownerKey.SK, ownerKey.PK
	def := a.publish(t, authorSK, nostr.Event{Kind: 4199, Tags: nostr.Tags{{"title", "Scribe"}, {"role", "keeps notes"}}})
	agents := make([]string, len(nodes))
	for i, n := range nodes {
		if i > 0 {
			n.publish(t, authorSK, nostr.Event{Kind: 4199, Tags: def.Tags, CreatedAt: def.CreatedAt})
		}
		agents[i] = installOn(t, n, def.ID, owner)
		if _, err := n.State().Register(ctx, serveTeamCap, []byte(serveTeamSchema)); err != nil {
			t.Fatal(err)
		}
	}
	for i, from := range nodes { // every relay knows every profile and the claims of all three
		for j, to := range nodes {
			if i != j {
				copyKind0(t, from, to, agents[i])
			}
		}
	}
	for _, n := range nodes {
		publishClaims(t, n, ownerSK, agents...)
	}
	callers := make([]state.Caller, len(nodes))
	for i := range nodes {
		callers[i] = state.Caller{Agent: agents[i], Owner: owner, Capability: serveTeamCap, Scope: "sc:test", Verbs: state.AllVerbs}
	}
	t.Cleanup(func() {
		if t.Failed() {
			for i, n := range nodes {
				for pk, r := range n.Replicators() {
					t.Logf("node %d replicator %s: %+v", i, pk[:8], r.Stats())
				}
			}
		}
	})

	ids := make([]string, docs)
	for i := range ids {
		ids[i] = fmt.Sprintf("44444444-4444-4444-8444-%012d", i)
		body := fmt.Sprintf(`{"id":%q,"title":"draft","body":"The quick fox.","tags":["x"],"createdAt":"2025-05-15T10:00:00Z","updatedAt":"2025-05-15T10:00:00Z"}`, ids[i])
		if _, err := a.State().Create(ctx, callers[0], serveTeamURI, []byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	allEqual := func(id string) bool {
		first := rawDoc(a, callers[0], id)
		return first != "" && rawDoc(b, callers[1], id) == first && rawDoc(c, callers[2], id) == first
	}
	for _, id := range ids {
		testkit.WaitFor(t, 60*time.Second, "document "+id+" on all three nodes", func() bool { return allEqual(id) })
	}

	link.cut() // C is partitioned from A and B; all three edit the same documents
	var wg sync.WaitGroup
	names := []string{"a", "b", "c"}
	for k, n := range nodes {
		wg.Go(func() {
			for r := range rounds {
				for _, id := range ids {
					cur := map[string]any{}
					if err := json.Unmarshal([]byte(rawDoc(n, callers[k], id)), &cur); err != nil {
						t.Errorf("node %s: %v", names[k], err)
						return
					}
					body, _ := json.Marshal(fmt.Sprintf("%s %s%d.", cur["body"], names[k], r))
					patch := fmt.Sprintf(`[{"op":"replace","path":"/title","value":"%[1]s %[2]d"},{"op":"add","path":"/tags/-","value":"%[1]s%[2]d"},{"op":"replace","path":"/body","value":%[3]s}]`, names[k], r, body)
					if _, err := n.State().Update(ctx, callers[k], serveTeamURI, id, []byte(patch)); err != nil {
						t.Errorf("update on %s: %v", names[k], err)
					}
				}
			}
		})
	}
	wg.Wait()
	// A and B still meet; C holds only its own edits.
	testkit.WaitFor(t, 60*time.Second, "A and B to converge during the partition", func() bool {
		for _, id := range ids {
			if rawDoc(a, callers[0], id) != rawDoc(b, callers[1], id) {
				return false
			}
		}
		return true
	})
	for _, id := range ids {
		if rawDoc(c, callers[2], id) == rawDoc(a, callers[0], id) {
			t.Fatalf("document %s reached C through the cut link", id)
		}
		if doc := rawDoc(a, callers[0], id); strings.Contains(doc, `"c0"`) {
			t.Fatalf("C's edit reached A through the cut link: %s", doc)
		}
	}

	link.restore()
	start := time.Now()
	for _, id := range ids {
		testkit.WaitFor(t, 90*time.Second, "document "+id+" identical on A, B and C after the partition", func() bool { return allEqual(id) })
	}
	t.Logf("%d documents converged on three nodes %s after the partition healed", docs, time.Since(start))
	for _, id := range ids {
		var doc struct {
			Tags []string `json:"tags"`
			Body string   `json:"body"`
		}
		if err := json.Unmarshal([]byte(rawDoc(a, callers[0], id)), &doc); err != nil {
			t.Fatal(err)
		}
		for _, name := range names {
			for r := range rounds {
				if !slices.Contains(doc.Tags, fmt.Sprintf("%s%d", name, r)) {
					t.Fatalf("document %s lost tag %s%d: %v", id, name, r, doc.Tags)
				}
			}
		}
		for k, n := range nodes {
			if d, err := n.State().Get(ctx, callers[k], serveTeamURI, id); err != nil || d.Incomplete != "" {
				t.Fatalf("node %s, document %s: %v incomplete %q", names[k], id, err, d.Incomplete)
			}
		}
	}
}

// cutProxy forwards TCP connections to a target address until cut: then it
// closes every open connection and closes new ones at once, until restored.
type cutProxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	down   bool
	conns  map[net.Conn]struct{}
	wg     sync.WaitGroup
}

func startCutProxy(t *testing.T, target string) *cutProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	p.wg.Go(p.accept)
	t.Cleanup(func() {
		ln.Close()
		p.cut()
		p.wg.Wait()
	})
	return p
}

func (p *cutProxy) Addr() string { return p.ln.Addr().String() }

func (p *cutProxy) accept() {
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		down := p.down
		p.mu.Unlock()
		if down {
			in.Close()
			continue
		}
		out, err := net.Dial("tcp", p.target)
		if err != nil {
			in.Close()
			continue
		}
		if !p.track(in, out) {
			continue
		}
		p.wg.Go(func() { p.pipe(in, out) })
		p.wg.Go(func() { p.pipe(out, in) })
	}
}

// track registers a connection pair, or closes both if the proxy went down
// meanwhile.
func (p *cutProxy) track(in, out net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.down {
		in.Close()
		out.Close()
		return false
	}
	p.conns[in], p.conns[out] = struct{}{}, struct{}{}
	return true
}

func (p *cutProxy) pipe(dst, src net.Conn) {
	io.Copy(dst, src)
	dst.Close()
	src.Close()
}

func (p *cutProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
}

func (p *cutProxy) restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = false
}
