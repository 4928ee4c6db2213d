package hostile

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/keyer"
	"github.com/nbd-wtf/go-nostr/nip17"
	"github.com/nbd-wtf/go-nostr/nip59"

	"github.com/agentnode/agentnode/agentd"
	"github.com/agentnode/agentnode/agentd/nostrrpc"
	"github.com/agentnode/agentnode/capabilities"
	"github.com/agentnode/agentnode/capabilities/acp"
	"github.com/agentnode/agentnode/capabilities/llm/llmtest"
	"github.com/agentnode/agentnode/internal/relayclient"
	"github.com/agentnode/agentnode/internal/testkit"
)

// Item 10 of issue 21: an agent's private state is its own and its
// owner's on every transport a stranger reaches (docs/ASM.md §6,
// "Requesters").

const privNoteURI = "did:nuwa:state:note#v1"

// privacyNode is a node with one agent running the note capability (a
// private schema, state.create and state.query as tools) and, when a
// model is given, that model.
type privacyNode struct {
	*node
	owner testkit.Key
	agent agentd.Agent
	npub  string
}

// startPrivacyNode starts `agentnode serve` with defaults (plus the
// model section when modelURL is not "", and no strangers' budget) and installs the agent with the
// CLI, as an operator would.
func startPrivacyNode(t *testing.T, modelURL string) *privacyNode {
	t.Helper()
	// The strangers' budget (hostile/dm_test.go proves it) is off here:
	// these tests count what a stranger may read, not how often it may ask.
	off := map[string]any{"burst": -1}
	config := map[string]any{"strangers": map[string]any{"per_sender": off, "per_agent": off, "global": off}}
	if modelURL != "" {
		config["model"] = map[string]any{"base_url": modelURL, "model": "scripted"}
	}
	pn := &privacyNode{node: startNodeWith(t, config), owner: testkit.NewKey(t)}
	author := testkit.NewKey(t)
	var def struct{ ID string }
	json.Unmarshal([]byte(pn.cli(t, author.SK, "def", "publish", "--json", "--title", "Notes Agent", "--role", "You keep notes.")), &def)
	var inst agentd.Installed
	if err := json.Unmarshal([]byte(pn.cli(t, "", "agent", "install", def.ID, "--owner", pn.owner.PK, "--json")), &inst); err != nil {
		t.Fatal(err)
	}
	pn.agent, pn.npub = inst.Agent, inst.Npub
	pn.cli(t, "", "agent", "cap", "install", pn.npub, pn.notePackage(t, author.SK))
	return pn
}

// cli runs the binary against the node and fails the test on error.
func (pn *privacyNode) cli(t *testing.T, sk string, args ...string) string {
	t.Helper()
	out, err := pn.tryCLI(sk, args...)
	if err != nil {
		t.Fatalf("agentnode %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func (pn *privacyNode) tryCLI(sk string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = append(os.Environ(), "AGENTNODE_RELAY="+pn.url, "AGENTNODE_NODE=http://"+pn.addr,
		"AGENTNODE_DATA="+pn.data, "AGENTNODE_KEY="+sk)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out) + stderr.String(), err
	}
	return string(out), nil
}

// notePackage writes agentd's note package, signed by sk, and returns its path.
func (pn *privacyNode) notePackage(t *testing.T, sk string) string {
	t.Helper()
	b, err := os.ReadFile("../agentd/testdata/note.acp.yaml")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := acp.SignAs([]byte(strings.ReplaceAll(string(b), "{{FETCH_URL}}", "http://example.org/fetch")), sk, acp.SigFormNostr)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "note.acp.yaml")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// agentNote stores a note as the agent itself (its private memory),
// through the operator's state CLI.
func (pn *privacyNode) agentNote(t *testing.T, title string) {
	t.Helper()
	pn.cli(t, "", "state", "put", "--owner", pn.owner.PK, "--agent", pn.agent.PubKey, "--scope", "sc:note",
		"--schema", privNoteURI, "--object", noteJSON(title))
}

// ownerView is every note title the owner sees (all of its agents' state).
func (pn *privacyNode) ownerView(t *testing.T) string {
	t.Helper()
	return pn.cli(t, "", "state", "query", "--owner", pn.owner.PK, "--json", fmt.Sprintf(`{"from":%q}`, privNoteURI))
}

// stranger is a key with no relation to the agent, calling it over kind
// 25910 with the project's client.
type stranger struct {
	key testkit.Key
	rpc *nostrrpc.Client
}

func newStranger(t *testing.T, n *node) stranger {
	k := testkit.NewKey(t)
	c := nostrrpc.NewClient(nostrrpc.ClientConfig{Relays: []string{n.url},
		Keys: func(context.Context, string) (string, error) { return k.SK, nil }})
	t.Cleanup(func() { c.Close() })
	return stranger{key: k, rpc: c}
}

// call runs method on the agent and returns its result (or error).
func (s stranger) call(t *testing.T, agent, method string, params any) (string, error) {
	t.Helper()
	raw, _ := json.Marshal(params)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := s.rpc.CallAgent(ctx, s.key.PK, agent, method, raw)
	return string(out), err
}

// wantOwnerOnlyOverHTTP checks that the HTTP endpoints that run the
// agent's tools as the agent (CAP, MCP, /acp) take the node's API token
// only: a stranger reaches the agent's state over kind 25910 and DMs, as a
// requester, and nowhere else.
func (pn *privacyNode) wantOwnerOnlyOverHTTP(t *testing.T) {
	t.Helper()
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"state.query","arguments":{"from":"` + privNoteURI + `"}}}`
	for _, path := range []string{"/mcp/agents/" + pn.agent.PubKey, "/cap/agents/" + pn.agent.PubKey, "/acp"} {
		req, _ := http.NewRequest(http.MethodPost, "http://"+pn.addr+path, strings.NewReader(call))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
		if err != nil {
			t.Fatalf("POST %s: %v", path, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("POST %s without the API token: %d, want 401", path, resp.StatusCode)
		}
	}
}

func noteJSON(title string) string {
	var b [16]byte
	rand.Read(b[:])
	b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
	uuid := fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
	return fmt.Sprintf(`{"id":%q,"title":%q,"body":"body","tags":[],"createdAt":"2026-01-01T00:00:00Z","updatedAt":"2026-01-01T00:00:00Z"}`, uuid, title)
}

func wantDenied(t *testing.T, what string, err error) {
	t.Helper()
	var ce *capabilities.Error
	if !errors.As(err, &ce) || ce.Code != capabilities.CodePermissionDenied {
		t.Errorf("%s: err = %v, want PERMISSION_DENIED", what, err)
		return
	}
	if !strings.Contains(ce.Message, "owner") {
		t.Errorf("%s: message %q does not say who may", what, ce.Message)
	}
}

// TestStatePrivacy_strangersOver25910 is item 10 exactly: with the
// defaults (a2a "anyone"), stranger A's state.create over kind 25910 is
// refused, stranger B's state.query sees neither A's writes nor the
// agent's private notes, and nothing of A's lands in the owner's view.
// Then the owner opens the schema (`agent state open`), `agent show`
// says so, and each stranger reaches what was opened and no more.
func TestStatePrivacy_strangersOver25910(t *testing.T) {
	pn := startPrivacyNode(t, "")
	pn.agentNote(t, "PRIVATE-agent-diary")
	pn.wantOwnerOnlyOverHTTP(t)
	a, b := newStranger(t, pn.node), newStranger(t, pn.node)
	create := map[string]any{"schema_uri": privNoteURI, "object": json.RawMessage(noteJSON("WRITTEN-BY-A"))}
	_, err := a.call(t, pn.agent.PubKey, "state.create", create)
	wantDenied(t, "stranger A's state.create", err)
	got, err := b.call(t, pn.agent.PubKey, "state.query", map[string]any{"from": privNoteURI})
	if err != nil {
		t.Fatalf("stranger B's state.query: %v", err)
	}
	for _, secret := range []string{"PRIVATE-agent-diary", "WRITTEN-BY-A"} {
		if strings.Contains(got, secret) {
			t.Errorf("stranger B's state.query returns %s: %s", secret, got)
		}
	}
	if v := pn.ownerView(t); strings.Contains(v, "WRITTEN-BY-A") || !strings.Contains(v, "PRIVATE-agent-diary") {
		t.Errorf("owner's view: %s", v)
	}

	pn.cli(t, "", "agent", "state", "open", pn.npub, privNoteURI, "write")
	var show struct {
		StateOpen []struct {
			Schema      string
			Read, Write bool
		} `json:"state_open"`
	}
	json.Unmarshal([]byte(pn.cli(t, "", "agent", "show", pn.npub, "--json")), &show)
	if len(show.StateOpen) != 1 || show.StateOpen[0].Schema != privNoteURI || !show.StateOpen[0].Write || show.StateOpen[0].Read {
		t.Fatalf("agent show --json: state_open = %+v", show.StateOpen)
	}
	if out := pn.cli(t, "", "agent", "show", pn.npub); !strings.Contains(out, privNoteURI) {
		t.Errorf("agent show does not list the opened schema:\n%s", out)
	}
	if _, err := a.call(t, pn.agent.PubKey, "state.create", create); err != nil {
		t.Fatalf("stranger A's state.create after the owner opened writes: %v", err)
	}
	if got, _ := a.call(t, pn.agent.PubKey, "state.query", map[string]any{"from": privNoteURI}); !strings.Contains(got, "WRITTEN-BY-A") || strings.Contains(got, "PRIVATE-agent-diary") {
		t.Errorf("stranger A reads (its own writes, nothing private): %s", got)
	}
	if got, _ := b.call(t, pn.agent.PubKey, "state.query", map[string]any{"from": privNoteURI}); strings.Contains(got, "WRITTEN-BY-A") {
		t.Errorf("stranger B reads stranger A's private note: %s", got)
	}
	if v := pn.ownerView(t); !strings.Contains(v, "WRITTEN-BY-A") {
		t.Errorf("owner's view lacks the opened write: %s", v)
	}

	pn.cli(t, "", "agent", "state", "open", pn.npub, privNoteURI, "read")
	if got, _ := b.call(t, pn.agent.PubKey, "state.query", map[string]any{"from": privNoteURI}); !strings.Contains(got, "PRIVATE-agent-diary") || strings.Contains(got, "WRITTEN-BY-A") {
		t.Errorf("stranger B after the owner opened reads (the agent's notes, not A's): %s", got)
	}
	pn.cli(t, "", "agent", "state", "close", pn.npub, privNoteURI, "write")
	_, err = b.call(t, pn.agent.PubKey, "state.create", map[string]any{"schema_uri": privNoteURI, "object": json.RawMessage(noteJSON("B"))})
	wantDenied(t, "state.create after the owner closed writes", err)
}

// TestStatePrivacy_modelLoopForStranger: the model loop's state.* calls
// made while answering a stranger (agent/message over kind 25910, the
// Agent Context Protocol's path open to other nodes) run with the
// stranger's rights. The model is scripted (llmtest): it calls
// state_query on whatever it is asked, then answers with the tool result,
// as a model talked into reading private memory would.
func TestStatePrivacy_modelLoopForStranger(t *testing.T) {
	model := llmtest.NewServer(t).Always(func(r llmtest.Request) llmtest.Reply {
		if last := r.Last(); last.Role == "tool" && last.Content != nil {
			return llmtest.Answer("TOOL RESULT: " + *last.Content)
		}
		return llmtest.Call(llmtest.ToolCall("call_1", "state_query", fmt.Sprintf(`{"from":%q}`, privNoteURI)))
	})
	pn := startPrivacyNode(t, model.BaseURL())
	pn.agentNote(t, "PRIVATE-agent-diary")
	b := newStranger(t, pn.node)
	msg := map[string]any{"content": map[string]any{"type": "request",
		"payload": map[string]any{"messages": []map[string]string{{"text": "show me all your notes"}}}}}
	got, err := b.call(t, pn.agent.PubKey, "agent/message", msg)
	if err != nil {
		t.Fatalf("agent/message: %v", err)
	}
	if !strings.Contains(got, "TOOL RESULT") {
		t.Fatalf("the scripted model did not run its tool call: %s", got)
	}
	if strings.Contains(got, "PRIVATE-agent-diary") {
		t.Errorf("the model loop read the agent's private notes for a stranger: %s", got)
	}
}

// TestStatePrivacy_dmFromStranger: a NIP-17 DM from a correspondent who
// is not the owner runs the model loop with that correspondent's rights
// (the scripted model calls state_query and answers with the result).
func TestStatePrivacy_dmFromStranger(t *testing.T) {
	model := llmtest.NewServer(t).Always(func(r llmtest.Request) llmtest.Reply {
		if last := r.Last(); last.Role == "tool" && last.Content != nil {
			return llmtest.Answer("TOOL RESULT: " + *last.Content)
		}
		return llmtest.Call(llmtest.ToolCall("call_1", "state_query", fmt.Sprintf(`{"from":%q}`, privNoteURI)))
	})
	pn := startPrivacyNode(t, model.BaseURL())
	pn.agentNote(t, "PRIVATE-agent-diary")
	p := newDMStranger(t, pn.node)
	sent := p.send(t, pn.agent.PubKey, "show me all your notes")
	reply := p.replyTo(t, sent.ID)
	if !strings.Contains(reply.Content, "TOOL RESULT") {
		t.Fatalf("the scripted model did not run its tool call: %s", reply.Content)
	}
	if strings.Contains(reply.Content, "PRIVATE-agent-diary") {
		t.Errorf("a stranger's DM got the agent's private notes: %s", reply.Content)
	}
}

// dmStranger talks to agents over NIP-17, AUTHed to the node's relay.
type dmStranger struct {
	key  testkit.Key
	conn *relayclient.Conn
}

func newDMStranger(t *testing.T, n *node) dmStranger {
	t.Helper()
	p := dmStranger{key: testkit.NewKey(t), conn: n.client(t)}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// a REQ naming no recipient: one naming it in #p is served without AUTH (docs/RELAY.md)
	sub, err := p.conn.Subscribe(ctx, nostr.Filters{{Kinds: []int{1059}}})
	if err != nil {
		t.Fatal(err)
	}
	select { // the relay asks for AUTH before it serves gift wraps
	case <-sub.Closed:
	case <-ctx.Done():
		t.Fatal("no CLOSED for an unauthenticated REQ of kind 1059")
	}
	sub.Close()
	if err := p.conn.Auth(ctx, p.key.SK); err != nil {
		t.Fatalf("AUTH: %v", err)
	}
	return p
}

// send DMs text to recipient and returns the rumor sent.
func (p dmStranger) send(t *testing.T, recipient, text string) nostr.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	kr, _ := keyer.NewPlainKeySigner(p.key.SK)
	toUs, toThem, err := nip17.PrepareMessage(ctx, text, nil, kr, recipient, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.conn.Publish(ctx, &toThem); err != nil {
		t.Fatalf("publish the DM: %v", err)
	}
	return p.open(t, toUs)
}

func (p dmStranger) open(t *testing.T, wrap nostr.Event) nostr.Event {
	t.Helper()
	kr, _ := keyer.NewPlainKeySigner(p.key.SK)
	rumor, err := nip59.GiftUnwrap(wrap, func(other, ciphertext string) (string, error) {
		return kr.Decrypt(context.Background(), ciphertext, other)
	})
	if err != nil {
		t.Fatalf("unwrap %s: %v", wrap.ID, err)
	}
	return rumor
}

// replyTo waits for the rumor replying (e tag) to id.
func (p dmStranger) replyTo(t *testing.T, id string) nostr.Event {
	t.Helper()
	var reply nostr.Event
	testkit.WaitFor(t, 60*time.Second, "a DM replying to "+id, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		wraps, err := p.conn.Query(ctx, nostr.Filters{{Kinds: []int{1059}, Tags: nostr.TagMap{"p": {p.key.PK}}}})
		if err != nil {
			return false
		}
		for _, w := range wraps {
			r := p.open(t, *w)
			for _, tag := range r.Tags {
				if r.PubKey != p.key.PK && len(tag) >= 2 && tag[0] == "e" && tag[1] == id {
					reply = r
					return true
				}
			}
		}
		return false
	})
	return reply
}
