package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/agentnode/agentnode/capabilities/router"
)

// serveRouting is the --config "models" and "router" sections
// (docs/ROUTER.md):
//
//	"models": [{"name": "llama3.1:8b", "family": "llama3", "context_window": 8192, "features": ["tool_use"]},
//	           {"name": "gpt-4o-mini", "family": "gpt-4", "uri": "did:nuwa:model:gpt-4o-mini",
//	            "context_window": 128000, "features": ["tool_use", "function_calling_json_mode"]}],
//	"router": {"idle_timeout_seconds": 1800, "embedding_model": "text-embedding-3-small", "embedding_threshold": 0.8}
//
// The models are what capabilities' llm_requirements choose among, in
// this order of preference; each name is sent as the request's model to
// the one configured endpoint ("model" section). No list: requirements are
// not checked. idle_timeout_seconds: 0 = the default (1800), -1 = never.
// embedding_model makes embedding triggers match through the model
// endpoint's /v1/embeddings (none: they never match, and install warns);
// embedding_threshold is the cosine similarity a match needs (0 = 0.8).
type serveRouting struct {
	Models []serveModelEntry `json:"models"`
	Router struct {
		IdleTimeoutSeconds int     `json:"idle_timeout_seconds"`
		EmbeddingModel     string  `json:"embedding_model"`
		EmbeddingThreshold float64 `json:"embedding_threshold"`
	} `json:"router"`
}

type serveModelEntry struct {
	Name          string   `json:"name"`
	Family        string   `json:"family"`
	URI           string   `json:"uri"`
	ContextWindow int      `json:"context_window"`
	Features      []string `json:"features"`
}

// checkRouter bounds the "router" section's threshold and idle timeout.
func checkRouter(f *serveFile) error {
	r := f.Routing.Router
	if t := r.EmbeddingThreshold; t < 0 || t > 1 {
		return fmt.Errorf(`"router.embedding_threshold": a cosine similarity between 0 and 1 (0 = the default, 0.8)`)
	}
	if r.IdleTimeoutSeconds < -1 {
		return fmt.Errorf(`"router.idle_timeout_seconds": 0 (default), -1 (never) or a number of seconds`)
	}
	return nil
}

// checkModels refuses blank or repeated names and negative sizes.
func checkModels(f *serveFile) error {
	seen := map[string]bool{}
	for i, m := range f.Routing.Models {
		switch {
		case strings.TrimSpace(m.Name) == "":
			return fmt.Errorf(`"models"[%d]: "name" is required`, i)
		case seen[m.Name]:
			return fmt.Errorf(`"models"[%d]: %q is listed twice`, i, m.Name)
		case m.ContextWindow < 0:
			return fmt.Errorf(`"models"[%d]: "context_window" must not be negative`, i)
		}
		seen[m.Name] = true
	}
	return nil
}

// models is the list for agentd.Config.Models.
func (r serveRouting) models() []router.Model {
	var out []router.Model
	for _, m := range r.Models {
		out = append(out, router.Model{Name: m.Name, Family: m.Family, URI: m.URI,
			ContextWindow: m.ContextWindow, Features: m.Features})
	}
	return out
}

// idle is agentd.Config.RouterIdle.
func (r serveRouting) idle() time.Duration {
	if r.Router.IdleTimeoutSeconds < 0 {
		return -1
	}
	return time.Duration(r.Router.IdleTimeoutSeconds) * time.Second
}
