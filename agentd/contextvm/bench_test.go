package contextvm_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentnode/agentnode/agentd/contextvm"
	"github.com/agentnode/agentnode/internal/testkit"
)

// BenchmarkToolsCall is the round trip of one tools/call of a trivial
// tool (echo) from a go-sdk MCP client: over ContextVM through the
// relay (a real websocket to relay.Relay, the Server on its hooks) in
// plaintext and gift-wrapped, and over the MCP streamable HTTP transport
// to the same MCP server. p50 and p99 are reported per op (docs/CONTEXTVM.md):
//
//	go test -tags libsecp256k1 -run '^$' -bench ToolsCall -benchtime 2000x ./agentd/contextvm/
func BenchmarkToolsCall(b *testing.B) {
	b.Run("contextvm-plaintext", func(b *testing.B) {
		f := startFixture(b, contextvm.ServerConfig{})
		benchCalls(b, f.connect(b, testkit.NewKey(b), contextvm.EncryptionDisabled))
	})
	b.Run("contextvm-giftwrap", func(b *testing.B) {
		f := startFixture(b, contextvm.ServerConfig{})
		benchCalls(b, f.connect(b, testkit.NewKey(b), contextvm.EncryptionRequired))
	})
	b.Run("mcp-http", func(b *testing.B) {
		srv := echoServer()
		hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
		b.Cleanup(hs.Close)
		ctx, cancel := context.WithTimeout(context.Background(), testWait)
		defer cancel()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: hs.URL}, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { cs.Close() })
		benchCalls(b, cs)
	})
}

// benchCalls times b.N sequential tools/calls on cs.
func benchCalls(b *testing.B, cs *mcp.ClientSession) {
	ctx := context.Background()
	params := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}}
	if _, err := cs.CallTool(ctx, params); err != nil { // warm up: session, wrap kind learnt
		b.Fatal(err)
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		res, err := cs.CallTool(ctx, params)
		if err != nil || res.IsError {
			b.Fatalf("tools/call: %v %+v", err, res)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}
