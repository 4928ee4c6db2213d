package contextvm_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentnode/agentnode/agentd/contextvm"
	"github.com/agentnode/agentnode/internal/testkit"
)

// callEcho runs tools/list and tools/call on cs and checks the answers.
func callEcho(t *testing.T, cs *mcp.ClientSession, text string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testWait)
	defer cancel()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) != 2 || tools.Tools[0].Name != "echo" {
		t.Fatalf("tools/list = %+v, %v", tools, err)
	}
	if tools.Tools[0].OutputSchema == nil {
		t.Fatalf("tools/list: echo has no output schema")
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": text}})
	if err != nil || res.IsError {
		t.Fatalf("tools/call = %+v, %v", res, err)
	}
	raw, _ := json.Marshal(res.StructuredContent)
	if string(raw) != `{"echo":"`+text+`"}` {
		t.Fatalf("structuredContent = %s", raw)
	}
}

func TestServer_PlaintextAndEncrypted(t *testing.T) {
	f := startFixture(t, contextvm.ServerConfig{})
	for _, enc := range []contextvm.Encryption{contextvm.EncryptionDisabled, contextvm.EncryptionRequired} {
		t.Run(enc.String(), func(t *testing.T) {
			callEcho(t, f.connect(t, testkit.NewKey(t), enc), "hi "+enc.String())
		})
	}
}

// Two sessions of one caller, one after the other, number their requests
// from 0 alike: the second is answered too (replay memory is on event
// ids, not JSON-RPC ids).
func TestServer_RepeatedIDsAnswered(t *testing.T) {
	f := startFixture(t, contextvm.ServerConfig{})
	caller := testkit.NewKey(t)
	for range 2 {
		cs := f.connect(t, caller, contextvm.EncryptionOptional)
		callEcho(t, cs, "round")
		cs.Close()
	}
}

func TestServer_RequiredRefusesPlaintext(t *testing.T) {
	f := startFixture(t, contextvm.ServerConfig{Encryption: contextvm.EncryptionRequired})
	ctx, cancel := context.WithTimeout(context.Background(), testWait)
	defer cancel()
	tr := &contextvm.ClientTransport{Network: allowLoopback, Relays: []string{f.url}, SecretKey: testkit.NewKey(t).SK, Server: f.agent.PK, Encryption: contextvm.EncryptionDisabled}
	_, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, tr, nil)
	if err == nil {
		t.Fatal("plaintext initialize to a server requiring encryption succeeded")
	}
	t.Logf("refused: %v", err)
}

func TestServer_AuthorizeRefuses(t *testing.T) {
	f := startFixture(t, contextvm.ServerConfig{Authorize: func(context.Context, string, string) error { return context.Canceled }})
	ctx, cancel := context.WithTimeout(context.Background(), testWait)
	defer cancel()
	tr := &contextvm.ClientTransport{Network: allowLoopback, Relays: []string{f.url}, SecretKey: testkit.NewKey(t).SK, Server: f.agent.PK}
	_, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, tr, nil)
	if err == nil {
		t.Fatal("a refused client initialized")
	}
	if len(f.built) != 0 {
		t.Fatal("a session was built for a refused client")
	}
}

// MaxSessions bounds the sessions: the least recently used goes, and its
// client goes on without initialize.
func TestServer_SessionsBounded(t *testing.T) {
	f := startFixture(t, contextvm.ServerConfig{MaxSessions: 2})
	first := f.connect(t, testkit.NewKey(t), contextvm.EncryptionDisabled)
	for range 3 {
		callEcho(t, f.connect(t, testkit.NewKey(t), contextvm.EncryptionDisabled), "x")
	}
	if n := f.srv.Sessions(); n > 2 {
		t.Fatalf("%d sessions live, want at most 2", n)
	}
	callEcho(t, first, "evicted, still served")
}

// Every request of a session runs as its client (agentd/requester).
func TestServer_CallerIsTheRequester(t *testing.T) {
	f := startFixture(t, contextvm.ServerConfig{})
	caller := testkit.NewKey(t)
	cs := f.connect(t, caller, contextvm.EncryptionRequired)
	ctx, cancel := context.WithTimeout(context.Background(), testWait)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "whoami", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("whoami = %+v, %v", res, err)
	}
	if got := res.Content[0].(*mcp.TextContent).Text; got != caller.PK {
		t.Fatalf("requester %q, want the caller %s", got, caller.PK)
	}
}

// One client key opening a second session right after the first, with
// byte-identical messages (same client info, ids from 1 again, same
// second): the server serves it (replay memory per session for 25910s),
// and the client does not take the first session's stored reply for its
// own, nor drop its own reply as a duplicate of that one.
func TestServer_IdenticalSessionsSameSecond(t *testing.T) {
	f := startFixture(t, contextvm.ServerConfig{})
	for _, enc := range []contextvm.Encryption{contextvm.EncryptionDisabled, contextvm.EncryptionRequired} {
		t.Run(enc.String(), func(t *testing.T) {
			caller := testkit.NewKey(t)
			for i := range 2 {
				ctx, cancel := context.WithTimeout(context.Background(), testWait)
				tr := &contextvm.ClientTransport{Network: allowLoopback, Relays: []string{f.url}, SecretKey: caller.SK, Server: f.agent.PK, Encryption: enc}
				cs, err := mcp.NewClient(&mcp.Implementation{Name: "same", Version: "1"}, nil).Connect(ctx, tr, nil)
				cancel()
				if err != nil {
					t.Fatalf("session %d: %v", i+1, err)
				}
				callEcho(t, cs, "same")
				cs.Close()
			}
		})
	}
}
