package agentd_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/agentnode/agentnode/agentd"
	"github.com/agentnode/agentnode/capabilities/bindings"
	"github.com/agentnode/agentnode/capabilities/cap"
)

// BenchmarkCapHost_Invoke measures capability.invoke through the daemon
// as CAP and MCP serve it (cap.Host over Daemon.CapSource): a built-in
// tool (state.query) and a tool bound to http_get (a local page), so the
// per-call cost of resolving the capability, composing the agent and
// coding errors shows beside the work itself.
//
//	go test -tags libsecp256k1 -run '^$' -bench CapHost_Invoke -benchmem ./agentd/
func BenchmarkCapHost_Invoke(b *testing.B) {
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"text":"page"}`))
	}))
	b.Cleanup(page.Close)
	runner := bindings.New(bindings.Config{AllowPrivate: true})
	b.Cleanup(func() { runner.Close() })
	cn := openCapsNode(b, agentd.Config{Bindings: runner})
	cn.installFile(sign(b, notePackage(b, "1.0.0", page.URL+"/fetch"), cn.author.SK))
	host := cap.NewHost(cn.d.CapSource(), cap.Options{})
	ctx := context.Background()
	for _, c := range []struct {
		name, tool string
		input      json.RawMessage
	}{
		{"state.query", "state.query", json.RawMessage(`{"from":"` + noteURI + `"}`)},
		{"http_get", "fetch_web_content", json.RawMessage(`{"url":"https://example.org/"}`)},
	} {
		ref := cap.Ref{CapabilityID: "did:nuwa:cap:note/" + c.tool, Version: "1.0.0"}
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if res := host.Invoke(ctx, cn.agent.Agent.PubKey, ref, c.input); !res.OK {
					b.Fatalf("invoke: %+v", res.Error)
				}
			}
		})
	}
}
