package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/agentnode/agentnode/agentd"
	"github.com/agentnode/agentnode/capabilities/bindings"
	"github.com/agentnode/agentnode/capabilities/llm"
	"github.com/agentnode/agentnode/relay"
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

// serveSenders is the --config "dm" and "a2a" sections: who may talk to
// the agents over NIP-17 (docs/DM.md), who may run their capability tools
// over kind 25910 (docs/BINDINGS.md); agentd.SenderPolicy decides.
type serveSenders = agentd.SenderPolicy

// Values of a serveSenders' From.
const (
	sendersAnyone    = agentd.SendersAnyone
	sendersOwner     = agentd.SendersOwner
	sendersAllowlist = agentd.SendersAllowlist
)

// serveDirectory is the --config "directory" section: how often the local
// agents beat (30333) and how long another agent stays available after its
// latest heartbeat (docs/DIRECTORY.md). Zero: the defaults (30 s, 90 s).
type serveDirectory struct {
	HeartbeatSeconds int `json:"heartbeat_seconds"`
	TTLSeconds       int `json:"ttl_seconds"`
	// RemoteTimeoutSeconds bounds an agent/message to an agent on another
	// node (0: agentrpc.DefaultRemoteTimeout, 15 s).
	RemoteTimeoutSeconds int `json:"remote_timeout_seconds"`
}

// checkDirectory refuses negative intervals and a TTL not longer than
// the heartbeat interval.
func checkDirectory(f *serveFile) error {
	d := f.Directory
	if d.RemoteTimeoutSeconds < 0 {
		return fmt.Errorf(`"directory": remote_timeout_seconds must not be negative`)
	}
	if d.HeartbeatSeconds < 0 || d.TTLSeconds < 0 ||
		d.HeartbeatSeconds > 0 && d.TTLSeconds > 0 && d.TTLSeconds <= d.HeartbeatSeconds {
		return fmt.Errorf(`"directory": heartbeat_seconds and ttl_seconds must be positive, and the TTL longer than the interval`)
	}
	return nil
}

// checkBindings wants exactly one of command or url per MCP service.
func checkBindings(f *serveFile) error {
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
	file := c.conf().Model
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
	b := c.conf().Bindings
	cfg := bindings.Config{AllowPrivate: b.AllowPrivate, AllowHosts: b.AllowHosts, MCP: map[string]bindings.MCPEndpoint{}}
	for uri, end := range b.MCP {
		cfg.MCP[strings.TrimSpace(uri)] = bindings.MCPEndpoint{Command: end.Command, Env: end.Env, URL: end.URL}
	}
	return cfg
}

// dmAllowed reports whether from may talk to agent over DMs.
func (c *ServeCommand) dmAllowed(ctx context.Context, agent, from string) bool {
	return c.conf().DM.Admits(c.agentOwner(agent), from, nil)
}

// a2aAllowed reports whether the agent from may run agent's capability
// tools over kind 25910 (its owner's other agents may).
func (c *ServeCommand) a2aAllowed(ctx context.Context, agent, from string) bool {
	return c.conf().A2A.Admits(c.agentOwner(agent), from, c.siblingOwner(ctx, from))
}

// siblingOwner asks, when called, for the owner the agent from's verified
// owner link names ("" for none).
func (c *ServeCommand) siblingOwner(ctx context.Context, from string) func() string {
	return func() string {
		v, err := relay.VerifyAgent(ctx, c.relay, from) // the NIP-AE link, on the local relay
		if err != nil || !v.Verified {
			return ""
		}
		return v.Owner
	}
}

// agentOwner is a local agent's owner ("" for none, or no such agent).
func (c *ServeCommand) agentOwner(agent string) string {
	a, err := c.daemon.Lookup(agent)
	if err != nil {
		return ""
	}
	return a.Owner
}
