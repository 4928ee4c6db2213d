package agentrpc

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/agentnode/agentnode/jsonrpc"
)

// Protocol versions the endpoint speaks, in order of preference.
const (
	ProtocolACP     = "ACP-1.0"
	ProtocolMCP0618 = "2025-06-18"
	ProtocolMCP0326 = "2025-03-26"
)

// Protocols lists the versions initialize accepts, preferred first.
var Protocols = []string{ProtocolACP, ProtocolMCP0618, ProtocolMCP0326}

type initializeParams struct {
	ProtocolVersion string `json:"protocolVersion"`
	Capabilities    struct {
		Agent struct {
			Protocols []string `json:"protocols"` // an ACP client's full list
		} `json:"agent"`
	} `json:"capabilities"`
	ClientInfo map[string]any `json:"clientInfo"`
}

// InitializeResult is initialize's answer.
type InitializeResult struct {
	ProtocolVersion string             `json:"protocolVersion"`
	Capabilities    ServerCapabilities `json:"capabilities"`
	ServerInfo      ServerInfo         `json:"serverInfo"`
	Instructions    string             `json:"instructions,omitempty"`
}

// ServerCapabilities are MCP's plus the ACP's agent member.
type ServerCapabilities struct {
	Tools     struct{}          `json:"tools"`
	Resources struct{}          `json:"resources"`
	Sampling  *struct{}         `json:"sampling,omitempty"` // present when a model is configured
	Agent     AgentCapabilities `json:"agent"`
}

// AgentCapabilities are the ACP features the node serves.
type AgentCapabilities struct {
	Discovery    bool     `json:"discovery"`
	Evaluation   bool     `json:"evaluation"`
	Coordination bool     `json:"coordination"`
	Monitoring   bool     `json:"monitoring"`
	Protocols    []string `json:"protocols"`
}

// ServerInfo names the implementation.
type ServerInfo struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
}

// initialize negotiates the protocol version (negotiate) and states the
// capabilities. The endpoint keeps no session: initialize is negotiation
// only, and every other method works without it (HTTP POSTs are independent).
func (s *Service) initialize(ctx context.Context, params json.RawMessage) (any, error) {
	var p initializeParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if p.ProtocolVersion == "" && len(p.Capabilities.Agent.Protocols) == 0 {
		return nil, jsonrpc.InvalidParams("protocolVersion is required")
	}
	res := InitializeResult{
		ProtocolVersion: negotiate(p.ProtocolVersion, p.Capabilities.Agent.Protocols),
		ServerInfo:      ServerInfo{Name: s.cfg.Name, Version: s.cfg.Version},
		Capabilities: ServerCapabilities{Agent: AgentCapabilities{
			Discovery: true, Evaluation: true, Coordination: true, Monitoring: true, Protocols: Protocols}},
		Instructions: "Agent Context Protocol endpoint: agent/* methods, agent:// resources, agentSearch, taskAssign, agentEvaluate.",
	}
	if s.cfg.Model != nil {
		res.Capabilities.Sampling = &struct{}{}
	}
	return res, nil
}

// negotiate picks the version: the highest (most preferred) of Protocols
// that the client offers (its protocolVersion, or any of an ACP client's
// capabilities.agent.protocols); failing that, for a client that asked for
// an MCP dated version the latest MCP version (the MCP rule: the server
// answers with one it supports and the client decides), else ACP-1.0.
func negotiate(requested string, offered []string) string {
	offers := append([]string{requested}, offered...)
	for _, v := range Protocols {
		for _, o := range offers {
			if strings.EqualFold(strings.TrimSpace(o), v) {
				return v
			}
		}
	}
	if isDated(requested) {
		return ProtocolMCP0618
	}
	return ProtocolACP
}

// isDated reports whether v looks like an MCP version (YYYY-MM-DD).
func isDated(v string) bool {
	if len(v) != 10 || v[4] != '-' || v[7] != '-' {
		return false
	}
	for i, c := range v {
		if i != 4 && i != 7 && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// ack answers notifications/initialized (and anything else that needs no answer).
func (s *Service) ack(ctx context.Context, params json.RawMessage) (any, error) {
	return struct{}{}, nil
}

// ping answers MCP's keep-alive.
func (s *Service) ping(ctx context.Context, params json.RawMessage) (any, error) {
	return struct{}{}, nil
}
