package interop_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/internal/testkit"
)

// dmRequired makes dm.test.mjs fail, instead of skip, when the node does
// not answer DMs (no kind 10050 for the installed agent). Flip it to true
// once `agentnode serve` runs agentd/dm (docs/DM.md).
const dmRequired = true

// scriptedPrefix starts every answer of the scripted model.
const scriptedPrefix = "scripted answer to: "

// TestNostrToolsDM runs dm.test.mjs: a person sends a NIP-17 DM with
// nostr-tools to an agent of a running `agentnode serve` and decrypts the
// agent's reply. The node's model is a scripted OpenAI-compatible server
// (AGENTNODE_LLM_BASE_URL, AGENTNODE_LLM_MODEL). The agent is installed
// through the CLI, then the node restarts so that the DM service (which
// announces every agent's kind 10050 at start) knows it.
func TestNostrToolsDM(t *testing.T) {
	root, dir, node := nodeSuite(t, "nostr-tools")
	bin := buildAgentnode(t, root)
	llm := startScriptedModel(t)
	data := t.TempDir()
	env := []string{"AGENTNODE_LLM_BASE_URL=" + llm.URL + "/v1", "AGENTNODE_LLM_MODEL=scripted"}

	first := startServerWith(t, bin, data, env)
	agent := installAgent(t, bin, first.addr, data)
	first.stop(t)
	srv := startServerWith(t, bin, data, env)
	runNodeFile(t, node, dir, "dm.test.mjs", "RELAY_URL=ws://"+srv.addr, "AGENT_PUBKEY="+agent,
		"DM_ANSWER_PREFIX="+scriptedPrefix, fmt.Sprintf("DM_REQUIRED=%v", dmRequired))
	srv.stop(t)
}

// installAgent publishes a definition and installs an agent of it on the
// node at addr (data: its data directory, for the API token) with the CLI;
// it returns the agent's pubkey (hex).
func installAgent(t *testing.T, bin, addr, data string) string {
	t.Helper()
	author := nostr.GeneratePrivateKey()
	owner, _ := nostr.GetPublicKey(nostr.GeneratePrivateKey())
	var def struct{ ID string }
	cli(t, bin, &def, "def", "publish", "--relay", "ws://"+addr, "--key", author,
		"--title", "DM Agent", "--instructions", "Answer people who write to you.", "--json")
	var res struct {
		Agent struct{ PubKey string }
	}
	cli(t, bin, &res, "agent", "install", def.ID, "--owner", owner, "--node", "http://"+addr, "--data", data, "--json")
	if len(res.Agent.PubKey) != 64 || def.ID == "" {
		t.Fatalf("install gave agent %q of definition %q", res.Agent.PubKey, def.ID)
	}
	return res.Agent.PubKey
}

// cli runs the agentnode binary and decodes its JSON output into v.
func cli(t *testing.T, bin string, v any, args ...string) {
	t.Helper()
	testkit.RunJSON(t, bin, v, args...)
}

// startScriptedModel serves an OpenAI-compatible Chat Completions endpoint
// that answers scriptedPrefix + the last user message, plainly or as a
// stream, and logs each request.
func startScriptedModel(t *testing.T) *httptest.Server {
	t.Helper()
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
			http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
			return
		}
		var req chatRequest
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&req); err != nil {
			http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
			return
		}
		mu.Lock()
		t.Logf("scripted model: %s with %d messages (stream %v)", r.URL.Path, len(req.Messages), req.Stream)
		mu.Unlock()
		answer := scriptedPrefix + req.lastUser()
		if req.Stream {
			writeStream(w, answer)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"id": "chatcmpl-scripted", "object": "chat.completion", "created": time.Now().Unix(), "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": answer}}},
			"usage": map[string]int{"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
		})
	}))
	t.Cleanup(srv.Close)
	return srv
}

// chatRequest is the part of a Chat Completions request the script reads.
type chatRequest struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
}

// lastUser is the text of the last user message (string content, or the
// text parts of an array content).
func (r chatRequest) lastUser() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		m := r.Messages[i]
		if m.Role != "user" {
			continue
		}
		var s string
		if json.Unmarshal(m.Content, &s) == nil {
			return s
		}
		var parts []struct{ Type, Text string }
		json.Unmarshal(m.Content, &parts)
		var b strings.Builder
		for _, p := range parts {
			b.WriteString(p.Text)
		}
		return b.String()
	}
	return ""
}

// writeStream answers as server-sent events: one content delta, then [DONE].
func writeStream(w http.ResponseWriter, answer string) {
	w.Header().Set("Content-Type", "text/event-stream")
	chunk := func(delta map[string]any, finish any) string {
		b, _ := json.Marshal(map[string]any{"id": "chatcmpl-scripted", "object": "chat.completion.chunk",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
		return "data: " + string(b) + "\n\n"
	}
	io.WriteString(w, chunk(map[string]any{"role": "assistant", "content": answer}, nil))
	io.WriteString(w, chunk(map[string]any{}, "stop"))
	io.WriteString(w, "data: [DONE]\n\n")
}
