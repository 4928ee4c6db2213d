package hostile

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fasthttp/websocket"
	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd/dm"
	"github.com/agentnode/agentnode/capabilities/llm/llmtest"
	"github.com/agentnode/agentnode/internal/relayclient"
	"github.com/agentnode/agentnode/internal/testkit"
)

// dmNode is a running `agentnode serve` with one installed agent and a
// scripted OpenAI-compatible model that counts its calls.
type dmNode struct {
	*node
	model   *llmtest.Server
	agent   string // the agent's pubkey (hex)
	ownerSK string // its owner's secret key (hex)
}

// scriptedModel answers every chat completion with a fixed text; gate,
// when not nil, holds each request until it is closed (or the test ends).
func scriptedModel(t *testing.T, gate chan struct{}) *llmtest.Server {
	t.Helper()
	srv := llmtest.NewServer(t).Always(func(llmtest.Request) llmtest.Reply {
		if gate != nil {
			<-gate
		}
		return llmtest.Answer("scripted answer")
	})
	return srv
}

// dmConfig is the --config file of a DM node: the scripted model, and no
// per-IP event rate (the attacks come from many addresses; here all from
// 127.0.0.1).
func dmConfig(model *llmtest.Server) map[string]any {
	return map[string]any{
		"model": map[string]any{"base_url": model.BaseURL(), "model": "scripted"},
		"relay": map[string]any{"events_per_second": -1},
	}
}

// startDMNode starts a node with the scripted model and installs an agent
// of a fresh owner.
func startDMNode(t *testing.T, model *llmtest.Server) *dmNode {
	t.Helper()
	n := &dmNode{node: launchNode(t, launch{data: t.TempDir(), config: dmConfig(model)}), model: model, ownerSK: nostr.GeneratePrivateKey()}
	n.agent = n.install(t)
	return n
}

// install publishes a definition and installs an agent of it for the
// owner with the CLI; it returns the agent's pubkey.
func (n *dmNode) install(t *testing.T) string {
	t.Helper()
	owner, _ := nostr.GetPublicKey(n.ownerSK)
	var def struct{ ID string }
	cliJSON(t, &def, "def", "publish", "--relay", n.url, "--key", nostr.GeneratePrivateKey(),
		"--title", "DM Agent", "--instructions", "Answer people who write to you.", "--json")
	var res struct{ Agent struct{ PubKey string } }
	cliJSON(t, &res, "agent", "install", def.ID, "--owner", owner, "--node", "http://"+n.addr, "--data", n.data, "--json")
	if len(res.Agent.PubKey) != 64 {
		t.Fatalf("agent install gave agent %q", res.Agent.PubKey)
	}
	return res.Agent.PubKey
}

// cliJSON runs the binary and decodes its JSON output into v.
func cliJSON(t *testing.T, v any, args ...string) {
	t.Helper()
	testkit.RunJSON(t, binary, v, args...)
}

// giftWrap is a NIP-17 DM from senderSK to agent: rumor 14 -> seal 13
// (signed by the sender) -> wrap 1059 (a one-time key) dated at; it
// returns the wrap and the rumor's id (what the reply e-tags).
func giftWrap(t *testing.T, senderSK, agent, text string, at nostr.Timestamp) (*nostr.Event, string) {
	t.Helper()
	sender, _ := nostr.GetPublicKey(senderSK)
	rumor := nostr.Event{Kind: 14, PubKey: sender, CreatedAt: nostr.Now(), Tags: nostr.Tags{{"p", agent}}, Content: text}
	rumor.ID = rumor.GetID()
	return testkit.GiftWrap(t, testkit.Seal(t, rumor, senderSK, agent, at), agent, at), rumor.ID
}

// garbage are n junk gift wraps to agent dated at, each signed by a fresh
// key: half hold ciphertext that is not NIP-44, half a NIP-44 payload
// that decrypts to a seal with a forged signature (the costliest junk to
// reject: a key agreement, a decryption and a signature check).
func garbage(t *testing.T, agent string, n int, at nostr.Timestamp) []*nostr.Event {
	t.Helper()
	out := make([]*nostr.Event, n)
	for i := range out {
		if i%2 == 0 {
			out[i] = testkit.JunkWrap(t, agent, "junk "+strconv.Itoa(i), at)
			continue
		}
		seal := nostr.Event{Kind: 13, PubKey: strings.Repeat("ab", 32), CreatedAt: at, Tags: nostr.Tags{},
			Content: "x", ID: strings.Repeat("00", 32), Sig: strings.Repeat("00", 64)}
		out[i] = testkit.GiftWrap(t, seal, agent, at)
	}
	return out
}

// flood publishes evts over conns websockets at once, each writing its
// share without waiting and then reading the OKs; it fails the test if an
// event is refused.
func flood(t *testing.T, n *node, evts []*nostr.Event, conns int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, conns)
	for c := range conns {
		var share []*nostr.Event
		for i := c; i < len(evts); i += conns {
			share = append(share, evts[i])
		}
		ws := dialRaw(t, n, 0)
		wg.Go(func() { errs <- pipeline(ws.Conn, share) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// pipeline writes every event, then reads one accepting OK per event.
func pipeline(c *websocket.Conn, evts []*nostr.Event) error {
	c.SetWriteDeadline(time.Now().Add(60 * time.Second))
	for _, evt := range evts {
		b, _ := json.Marshal([]any{"EVENT", evt})
		if err := c.WriteMessage(websocket.TextMessage, b); err != nil {
			return fmt.Errorf("flood: write: %w", err)
		}
	}
	c.SetReadDeadline(time.Now().Add(60 * time.Second))
	for got := 0; got < len(evts); {
		_, b, err := c.ReadMessage()
		if err != nil {
			return fmt.Errorf("flood: %d of %d OKs: %w", got, len(evts), err)
		}
		var msg []json.RawMessage
		if json.Unmarshal(b, &msg) != nil || len(msg) < 3 || str(msg[0]) != "OK" {
			continue
		}
		if string(msg[2]) != "true" {
			return fmt.Errorf("flood: refused: %s", b)
		}
		got++
	}
	return nil
}

// reader reads what the relay holds for sk's pubkey (it answers NIP-42).
func reader(t *testing.T, n *node, sk string) *relayclient.Relay {
	t.Helper()
	r := relayclient.New(n.url, sk, nil)
	t.Cleanup(func() { r.Close() })
	return r
}

// answered reports whether the agent's reply to rumor id is stored for
// the reader's key sk (a gift wrap whose rumor e-tags id).
func answered(ctx context.Context, r *relayclient.Relay, sk, id string) bool {
	pk, _ := nostr.GetPublicKey(sk)
	wraps, err := r.Query(ctx, nostr.Filter{Kinds: []int{1059}, Tags: nostr.TagMap{"p": {pk}}})
	if err != nil {
		return false
	}
	for _, w := range wraps {
		msg, err := dm.Unwrap(w, sk)
		if err == nil && msg.Rumor.Tags.FindWithValue("e", id) != nil {
			return true
		}
	}
	return false
}

// waitAnswered waits up to within for the reply to rumor id; false if
// none came.
func waitAnswered(t *testing.T, r *relayclient.Relay, sk, id string, within time.Duration) bool {
	t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		ok := answered(ctx, r, sk, id)
		cancel()
		if ok {
			return true
		}
		time.Sleep(50 * time.Millisecond) // polling interval of a condition with a deadline
	}
	return false
}

// metric is the sum of the /metrics samples whose line starts with
// prefix (a name and, optionally, the start of its labels).
func (n *node) metric(t *testing.T, prefix string) float64 {
	t.Helper()
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get("http://" + n.addr + "/metrics")
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	var sum float64
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		if i := strings.LastIndexByte(line, ' '); i > 0 {
			v, _ := strconv.ParseFloat(line[i+1:], 64)
			sum += v
		}
	}
	return sum
}
