package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// embeddingProvider is an OpenAI-compatible endpoint on loopback: chat
// completions answer "ok"; /v1/embeddings gives texts about meetings one
// direction and every other text an orthogonal one.
func embeddingProvider(t *testing.T) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var embeds atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/v1/embeddings":
			embeds.Add(1)
			var req struct {
				Model string   `json:"model"`
				Input []string `json:"input"`
			}
			json.NewDecoder(r.Body).Decode(&req)
			if req.Model != "emb-1" {
				http.Error(w, `{"error":{"message":"unknown model"}}`, http.StatusBadRequest)
				return
			}
			var data []map[string]any
			for i, in := range req.Input {
				v := []float64{0, 1}
				if strings.Contains(strings.ToLower(in), "meeting") {
					v = []float64{1, 0.1}
				}
				data = append(data, map[string]any{"index": i, "embedding": v})
			}
			json.NewEncoder(w).Encode(map[string]any{"data": data})
		case "/v1/chat/completions":
			w.Write([]byte(`{"model":"chat-1","choices":[{"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}`))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &embeds
}

// embeddingNotePackage is the note package routed by an embedding trigger
// alone.
func embeddingNotePackage(t *testing.T) []byte {
	t.Helper()
	s := string(mustReadFile(t, notePackageFile(t, t.TempDir(), "1.0.0", "")))
	out := strings.Replace(s, `    - {type: regex, value: "(?i)\\bnotes?\\b"}`, `    - {type: embedding, value: "notes about meetings"}`, 1)
	if out == s {
		t.Fatal("the note package's trigger changed: the test's edit no longer applies")
	}
	return []byte(out)
}

// TestSpecsEmbeddingTriggers_E2E: with router.embedding_model configured, a
// message close to an embedding trigger (the endpoint's /v1/embeddings)
// routes to its capability, a distant one falls back; the trigger vectors
// are asked for once.
func TestSpecsEmbeddingTriggers_E2E(t *testing.T) {
	srv, embeds := embeddingProvider(t)
	cfg := configFile(t, map[string]any{"model": map[string]any{"base_url": srv.URL + "/v1", "model": "chat-1"},
		"router": map[string]any{"embedding_model": "emb-1"}})
	n := startEndpointNode(t, "Note Keeper", "--config", cfg)
	n.installSigned(t, embeddingNotePackage(t))
	ctx := context.Background()
	far, err := n.Daemon().Chat(ctx, n.agent.Npub, "c1", "hello there")
	if err != nil {
		t.Fatal(err)
	}
	near, err := n.Daemon().Chat(ctx, n.agent.Npub, "c2", "what did the meeting decide?")
	if err != nil {
		t.Fatal(err)
	}
	if far.Capability != "" || far.Reason != "fallback" {
		t.Fatalf("a distant message: capability %q reason %q; want the fallback", far.Capability, far.Reason)
	}
	if near.Capability != "did:nuwa:cap:note@1.0.0" || near.Reason != "trigger:embedding:notes about meetings" {
		t.Fatalf("a message about meetings: capability %q reason %q; want the note capability by its embedding trigger", near.Capability, near.Reason)
	}
	if got := embeds.Load(); got != 2 {
		t.Fatalf("%d embeddings requests for two messages, want 2 (the trigger's vector cached)", got)
	}
}

// TestSpecsEmbeddingTriggers_noModel: without an embedding model the same
// package installs with a warning and the message falls back.
func TestSpecsEmbeddingTriggers_noModel(t *testing.T) {
	srv, embeds := embeddingProvider(t)
	cfg := configFile(t, map[string]any{"model": map[string]any{"base_url": srv.URL + "/v1", "model": "chat-1"}})
	n := startEndpointNode(t, "Note Keeper", "--config", cfg)
	ch := n.installSigned(t, embeddingNotePackage(t))
	if !strings.Contains(strings.Join(ch.Cap.Warnings, "\n"), "embedding trigger: matched only on a node with an embedding model") {
		t.Fatalf("install warnings = %v; want the embedding trigger's", ch.Cap.Warnings)
	}
	r, err := n.Daemon().Chat(context.Background(), n.agent.Npub, "c1", "what did the meeting decide?")
	if err != nil {
		t.Fatal(err)
	}
	if r.Capability != "" || embeds.Load() != 0 {
		t.Fatalf("without an embedding model: capability %q, %d embeddings requests; want the fallback and none", r.Capability, embeds.Load())
	}
}
