package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/agentnode/agentnode/capabilities/bindings"
	"github.com/agentnode/agentnode/capabilities/llm"
)

// serveModel is the --config "model" section: the OpenAI-compatible chat
// model the agents talk through. The AGENTNODE_LLM_* environment
// variables override it (docs/MODEL.md).
type serveModel struct {
	BaseURL        string `json:"base_url"`
	Model          string `json:"model"`
	APIKeyEnv      string `json:"api_key_env"` // the variable holding the key: keys stay out of files
	TimeoutSeconds int    `json:"timeout_seconds"`
}

// serveBindings is the --config "bindings" section (docs/BINDINGS.md).
type serveBindings struct {
	AllowPrivate bool                   `json:"allow_private"`
	AllowHosts   []string               `json:"allow_hosts"`
	MCP          map[string]serveMCPEnd `json:"mcp"` // service_uri -> endpoint
}

// serveMCPEnd is one MCP service: a stdio command or a streamable HTTP URL.
type serveMCPEnd struct {
	Command []string `json:"command"`
	Env     []string `json:"env"`
	URL     string   `json:"url"`
}

// parseRuntimeSections decodes the "model" and "bindings" sections,
// refusing unknown keys.
func parseRuntimeSections(top map[string]json.RawMessage, f *serveFile) error {
	for name, dst := range map[string]any{"model": &f.Model, "bindings": &f.Bindings, "consent": &f.Consent} {
		raw, ok := top[name]
		if !ok {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(dst); err != nil {
			return fmt.Errorf("%q: %v", name, err)
		}
	}
	for uri, end := range f.Bindings.MCP {
		if (len(end.Command) == 0) == (end.URL == "") {
			return fmt.Errorf(`"bindings.mcp" %q: give exactly one of "command" or "url"`, uri)
		}
	}
	return nil
}

// modelConfig is the chat model in force: the --config "model" section,
// overridden by AGENTNODE_LLM_* (and OPENAI_*) variables. It returns
// llm.ErrNoModel when neither names a model: the node then runs without
// one and only chat says so.
func (c *ServeCommand) modelConfig() (llm.Config, error) {
	var file serveModel
	if c.file != nil {
		file = c.file.Model
	}
	getenv := func(k string) string {
		if v := c.m.Getenv(k); v != "" {
			return v
		}
		switch k {
		case llm.EnvBaseURL:
			return file.BaseURL
		case llm.EnvModel:
			return file.Model
		case llm.EnvAPIKey:
			if file.APIKeyEnv != "" {
				return c.m.Getenv(file.APIKeyEnv)
			}
		}
		return ""
	}
	cfg, err := llm.ConfigFromEnv(getenv)
	if err == nil && file.TimeoutSeconds > 0 {
		cfg.Timeout = time.Duration(file.TimeoutSeconds) * time.Second
	}
	return cfg, err
}

// bindingsConfig is the tool bindings' configuration (without A2A, which
// serve sets once the relays are known).
func (c *ServeCommand) bindingsConfig() bindings.Config {
	var b serveBindings
	if c.file != nil {
		b = c.file.Bindings
	}
	cfg := bindings.Config{AllowPrivate: b.AllowPrivate, AllowHosts: b.AllowHosts, MCP: map[string]bindings.MCPEndpoint{}}
	for uri, end := range b.MCP {
		cfg.MCP[strings.TrimSpace(uri)] = bindings.MCPEndpoint{Command: end.Command, Env: end.Env, URL: end.URL}
	}
	return cfg
}
