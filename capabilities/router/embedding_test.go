package router

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agentnode/agentnode/capabilities/acp"
)

// embedFunc is an Embedder from a function.
type embedFunc func(ctx context.Context, texts []string) ([][]float64, error)

func (f embedFunc) Embed(ctx context.Context, texts []string) ([][]float64, error) {
	return f(ctx, texts)
}

// TestRouter_embeddingTriggers: a message close enough to an embedding
// trigger routes to it, a keyword match still wins, a failing embedder is
// no match, and below the threshold is the fallback.
func TestRouter_embeddingTriggers(t *testing.T) {
	vec := func(s string) []float64 {
		switch {
		case strings.Contains(s, "meeting"):
			return []float64{1, 0}
		case strings.Contains(s, "almost"):
			return []float64{0.7, 0.7}
		}
		return []float64{0, 1}
	}
	var fail bool
	emb := embedFunc(func(_ context.Context, texts []string) ([][]float64, error) {
		if fail {
			return nil, errors.New("down")
		}
		out := make([][]float64, len(texts))
		for i, s := range texts {
			out[i] = vec(s)
		}
		return out, nil
	})
	routes := []Route{
		{ID: "did:nuwa:cap:kw@1.0.0", Triggers: []acp.Trigger{{Type: "keyword", Value: "weather"}}},
		{ID: "did:nuwa:cap:notes@1.0.0", Triggers: []acp.Trigger{{Type: "embedding", Value: "meeting notes"}}},
	}
	r := NewWith(routes, Options{Embedder: emb})
	for i, tc := range []struct {
		msg, want, reason string
		fail              bool
	}{
		{"the meeting today", "did:nuwa:cap:notes@1.0.0", "trigger:embedding:meeting notes", false},
		{"weather after the meeting", "did:nuwa:cap:kw@1.0.0", "trigger:weather", false},
		{"almost related", "", ReasonFallback, false},
		{"the meeting again", "", ReasonFallback, true},
	} {
		fail = tc.fail
		d := r.Route(string(rune('a'+i)), tc.msg)
		if d.Capability != tc.want || d.Reason != tc.reason {
			t.Errorf("%q: %q %q, want %q %q", tc.msg, d.Capability, d.Reason, tc.want, tc.reason)
		}
	}
	if NewWith(routes, Options{}).Route("x", "the meeting today").Capability != "" {
		t.Error("without an Embedder an embedding trigger matched")
	}
}
