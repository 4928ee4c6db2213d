package contextvm_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentnode/agentnode/agentd/contextvm"
	"github.com/agentnode/agentnode/agentd/requester"
	"github.com/agentnode/agentnode/internal/testkit"
	"github.com/agentnode/agentnode/internal/testkit/testrelay"
	"github.com/agentnode/agentnode/relay"
)

// testWait bounds every wait in these tests (a hang fails; nothing is timed).
const testWait = 30 * time.Second

// key is a keypair.
type key = testkit.Key

func testLogger(t testing.TB) *slog.Logger { return testkit.Logger(t, slog.LevelInfo) }

// fixture is a relay on loopback with a ContextVM server for one agent
// whose MCP server has an "echo" tool.
type fixture struct {
	relay *relay.Relay
	url   string
	agent key
	srv   *contextvm.Server
	built chan string // clients of the sessions built
}

func startFixture(t testing.TB, cfg contextvm.ServerConfig) *fixture {
	t.Helper()
	url, rl := testrelay.Serve(t, relay.Config{Version: "test", Logger: testLogger(t)})
	f := &fixture{relay: rl, url: url, agent: testkit.NewKey(t), built: make(chan string, 100)}
	cfg.Keys = func(_ context.Context, pk string) (string, bool) { return f.agent.SK, pk == f.agent.PK }
	cfg.Publish = rl.Publish
	cfg.Logger = testLogger(t)
	cfg.Build = func(_ context.Context, _, client string) (*mcp.Server, error) {
		f.built <- client
		return echoServer(), nil
	}
	f.srv = contextvm.NewServer(cfg)
	unEph := rl.OnEphemeral(f.srv.Offer)
	unStored := rl.OnStored(f.srv.Offer)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { f.srv.Run(ctx); close(done) }()
	<-f.srv.Ready()
	t.Cleanup(func() { // before testrelay closes the server and the relay
		cancel()
		<-done
		unEph()
		unStored()
	})
	return f
}

type echoIn struct {
	Text string `json:"text"`
}

type echoOut struct {
	Echo string `json:"echo"`
}

func echoServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "echo", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "echoes text"}, func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, echoOut, error) {
		return nil, echoOut{Echo: in.Text}, nil
	})
	s.AddTool(&mcp.Tool{Name: "whoami", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: requester.From(ctx)}}}, nil
	})
	return s
}

var sessionNo atomic.Int64

// connect opens an MCP client session to the fixture's agent as caller.
func (f *fixture) connect(t testing.TB, caller key, enc contextvm.Encryption) *mcp.ClientSession {
	t.Helper()
	return f.connectVia(t, f.url, caller, enc)
}

// connectVia is connect through the relay address url (a proxy of f's).
func (f *fixture) connectVia(t testing.TB, url string, caller key, enc contextvm.Encryption) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testWait)
	defer cancel()
	tr := &contextvm.ClientTransport{Network: allowLoopback, Relays: []string{url}, SecretKey: caller.SK, Server: f.agent.PK, Encryption: enc, Logger: testLogger(t)}
	// A distinct name per session: two identical initialize requests
	// signed by one key in the same second are one event (the same id).
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: fmt.Sprint(sessionNo.Add(1))}, nil).Connect(ctx, tr, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// waitFor polls cond until it holds or testWait passes.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	testkit.WaitFor(t, testWait, what, cond)
}
