package hostile

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd/contextvm"
	"github.com/agentnode/agentnode/internal/netguard"
)

// BenchmarkContextVM_toolsCall is the round trip of one tools/call to an
// agent of the real binary, from a go-sdk client calling sequentially as
// the agent's owner (the strangers' budget does not apply): over ContextVM
// through the node's relay in plaintext and gift-wrapped, and over the
// MCP endpoint /mcp/agents/{agent} (streamable HTTP, with the token). The
// tool is one the agent does not have (a NOT_FOUND tool result): the
// figure is the transport's. p50 and p99 per op (docs/CONTEXTVM.md):
//
//	go test -tags libsecp256k1 -run '^$' -bench ContextVM_toolsCall -benchtime 1000x ./hostile/
func BenchmarkContextVM_toolsCall(b *testing.B) {
	n := startNode(b, map[string]any{"events_per_second": -1})
	ownerSK := nostr.GeneratePrivateKey()
	agent := benchInstall(b, n, ownerSK)
	for _, tc := range []struct {
		name string
		enc  contextvm.Encryption
	}{{"contextvm-plaintext", contextvm.EncryptionDisabled}, {"contextvm-giftwrap", contextvm.EncryptionRequired}} {
		b.Run(tc.name, func(b *testing.B) {
			tr := &contextvm.ClientTransport{Network: netguard.Policy{AllowPrivate: true}, Relays: []string{n.url}, SecretKey: ownerSK, Server: agent, Encryption: tc.enc}
			benchToolCalls(b, benchConnect(b, tr))
		})
	}
	b.Run("mcp-http", func(b *testing.B) {
		tok, err := os.ReadFile(filepath.Join(n.data, "agents", "api.token"))
		if err != nil {
			b.Fatal(err)
		}
		hc := &http.Client{Transport: bearer{strings.TrimSpace(string(tok))}}
		benchToolCalls(b, benchConnect(b, &mcp.StreamableClientTransport{Endpoint: "http://" + n.addr + "/mcp/agents/" + agent, HTTPClient: hc}))
	})
}

// bearer adds the API token to every request.
type bearer struct{ token string }

func (t bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+t.token)
	return http.DefaultTransport.RoundTrip(r)
}

func benchConnect(b *testing.B, t mcp.Transport) *mcp.ClientSession {
	ctx, cancel := context.WithTimeout(context.Background(), cvmWait)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, t, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	return cs
}

// benchInstall installs an agent owned by ownerSK's key with the CLI.
func benchInstall(b *testing.B, n *node, ownerSK string) string {
	owner, _ := nostr.GetPublicKey(ownerSK)
	run := func(v any, args ...string) {
		out, err := exec.Command(binary, args...).Output()
		if err != nil || json.Unmarshal(out, v) != nil {
			b.Fatalf("agentnode %s: %v %s", strings.Join(args, " "), err, out)
		}
	}
	var def struct{ ID string }
	run(&def, "def", "publish", "--relay", n.url, "--key", nostr.GeneratePrivateKey(), "--title", "Bench", "--instructions", "x", "--json")
	var res struct{ Agent struct{ PubKey string } }
	run(&res, "agent", "install", def.ID, "--owner", owner, "--node", "http://"+n.addr, "--data", n.data, "--json")
	return res.Agent.PubKey
}

// benchToolCalls times b.N sequential tools/calls on cs.
func benchToolCalls(b *testing.B, cs *mcp.ClientSession) {
	ctx := context.Background()
	params := &mcp.CallToolParams{Name: "no_such_tool", Arguments: map[string]any{}}
	call := func() {
		res, err := cs.CallTool(ctx, params)
		if err != nil || !res.IsError {
			b.Fatalf("tools/call: %v %+v", err, res)
		}
	}
	call() // warm up (the wrap kind is learnt)
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		call()
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}
