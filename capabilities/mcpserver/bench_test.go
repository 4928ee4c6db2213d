package mcpserver_test

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/agentnode/agentnode/capabilities/mcpserver"
	"github.com/agentnode/agentnode/capabilities/registry"
	"github.com/agentnode/agentnode/capabilities/registry/registrytest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkSearchCapabilities: the search_capabilities MCP tool over
// 10,000 packages in a real relay, called by the go-sdk client over
// streamable HTTP (one session; each op is one tools/call).
func BenchmarkSearchCapabilities(b *testing.B) {
	rel := registrytest.SeededRelay(b, 10_000)
	reg := registry.New(rel)
	if err := reg.Load(context.Background()); err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(mcpserver.New(reg, nil, mcpserver.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}))
	defer srv.Close()
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp"}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	v := registrytest.Vocabulary
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		q := v[(i*3)%len(v)]
		start := time.Now()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: mcpserver.ToolSearch,
			Arguments: map[string]any{"query_string": q, "filters": map[string]any{"limit": 20}}})
		lat = append(lat, time.Since(start))
		if err != nil || res.IsError {
			b.Fatalf("%v %v", err, res)
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}
