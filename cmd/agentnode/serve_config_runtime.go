package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentnode/agentnode/capabilities/bindings"
	"github.com/agentnode/agentnode/capabilities/llm"
	"github.com/agentnode/agentnode/events"
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

// serveDM is the --config "dm" section: who may talk to the agents over
// NIP-17 (docs/DM.md). From is "anyone" (the default), "owner" (only each
// agent's owner) or "allowlist" (the owner and the pubkeys in Allow).
// Others get no answer at all.
type serveDM struct {
	From  string   `json:"from"`
	Allow []string `json:"allow"` // npub or hex
}

// DM senders policies.
const (
	dmFromAnyone    = "anyone"
	dmFromOwner     = "owner"
	dmFromAllowlist = "allowlist"
)

// parseRuntimeSections decodes the "model" and "bindings" sections,
// refusing unknown keys.
func parseRuntimeSections(top map[string]json.RawMessage, f *serveFile) error {
	for name, dst := range map[string]any{"model": &f.Model, "bindings": &f.Bindings, "consent": &f.Consent, "dm": &f.DM} {
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
	if err := checkDM(&f.DM); err != nil {
		return err
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

// checkDM checks the "dm" section and turns its allowlist into hex keys.
func checkDM(d *serveDM) error {
	switch d.From {
	case "":
		d.From = dmFromAnyone
	case dmFromAnyone, dmFromOwner, dmFromAllowlist:
	default:
		return fmt.Errorf(`"dm.from" %q: want "anyone", "owner" or "allowlist"`, d.From)
	}
	for i, a := range d.Allow {
		pk, err := events.ParsePubKey(a)
		if err != nil {
			return fmt.Errorf(`"dm.allow" %q: %v`, a, err)
		}
		d.Allow[i] = pk
	}
	return nil
}

// dmAllowed reports whether from may talk to agent over DMs.
func (c *ServeCommand) dmAllowed(agent, from string) bool {
	d := serveDM{From: dmFromAnyone}
	if c.file != nil && c.file.DM.From != "" {
		d = c.file.DM
	}
	if d.From == dmFromAnyone {
		return true
	}
	if a, err := c.daemon.Lookup(agent); err == nil && a.Owner == from {
		return true
	}
	return d.From == dmFromAllowlist && slices.Contains(d.Allow, from)
}
