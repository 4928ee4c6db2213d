package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/agentnode/agentnode/capabilities"
	"github.com/agentnode/agentnode/capabilities/cap"
	"github.com/agentnode/agentnode/capabilities/registry"
	"github.com/agentnode/agentnode/internal/httpauth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// agentEndpoint serves /mcp/agents/{agent}.
type agentEndpoint struct {
	host *cap.Host
	opts Options
	gate *sessionGate // caps the sessions of every agent together

	mu       sync.Mutex
	handlers map[string]*mcp.StreamableHTTPHandler // agent -> its sessions
}

type agentKey struct{}

// sessions returns agent's streamable handler: one per agent, so that a
// session id minted for one agent is unknown on another agent's path.
func (a *agentEndpoint) sessions(agent string) *mcp.StreamableHTTPHandler {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.handlers == nil {
		a.handlers = map[string]*mcp.StreamableHTTPHandler{}
	}
	h := a.handlers[agent]
	if h == nil {
		h = mcp.NewStreamableHTTPHandler(a.serverFor, streamOptions(a.opts))
		a.handlers[agent] = h
	}
	return h
}

// handler checks the bearer token and the session cap, then hands the
// request to the agent's streamable handler, which builds a server per
// session.
func (a *agentEndpoint) handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		agent, err := registry.NormalizeAuthor(r.PathValue("agent"))
		if err != nil || agent == "" {
			http.Error(w, "mcp: not an agent pubkey", http.StatusNotFound)
			return
		}
		if a.opts.Authorize == nil || a.opts.Authorize(r.Context(), agent, httpauth.Token(r)) != nil {
			w.Header().Set("WWW-Authenticate", httpauth.Challenge)
			http.Error(w, "mcp: unauthorized", http.StatusUnauthorized)
			return
		}
		a.gate.admit(a.sessions(agent)).ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), agentKey{}, agent)))
	})
}

// serverFor builds the MCP server of the agent in r's context (build).
// nil (400) when the agent's capabilities cannot be read.
func (a *agentEndpoint) serverFor(r *http.Request) *mcp.Server {
	agent, _ := r.Context().Value(agentKey{}).(string)
	s, err := a.build(r.Context(), agent)
	if err != nil {
		a.opts.Logger.Warn("mcp: agent capabilities", "agent", agent, "err", err)
		return nil
	}
	created(r, s) // counted by the session gate once the session is open
	return s
}

// unknownToolNotFound answers tools/call of a tool the server does not
// have with an InvokeResult NOT_FOUND (isError), as every other CAP
// failure is answered, instead of the SDK's protocol error -32602.
func unknownToolNotFound(served map[string]bool) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if call, ok := req.(*mcp.CallToolRequest); ok && method == "tools/call" && call.Params != nil && !served[call.Params.Name] {
				return toolResult(cap.InvokeResult{Error: capabilities.Errorf(capabilities.CodeNotFound, "no tool %q", call.Params.Name)}), nil
			}
			return next(ctx, method, req)
		}
	}
}

// addTool serves m as the MCP tool alias (its input schema must be an object).
func (a *agentEndpoint) addTool(s *mcp.Server, agent, alias string, m cap.Manifest) error {
	var schema map[string]any
	if err := json.Unmarshal(m.InputSchema, &schema); err != nil || schema["type"] != "object" {
		return fmt.Errorf("input_schema is not an object schema")
	}
	t := &mcp.Tool{Name: alias, Title: m.Name, Description: m.Description, InputSchema: schema,
		Meta: mcp.Meta{"capability_id": m.CapabilityID, "version": m.Version, "kind": m.Kind}}
	if out := invokeResultSchema(m.OutputSchema); out != nil {
		t.OutputSchema = out
	}
	ref := m.Ref()
	s.AddTool(t, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return toolResult(a.host.Invoke(ctx, agent, ref, req.Params.Arguments)), nil
	})
	return nil
}

// invokeResultSchema is the MCP outputSchema of a capability with an
// output_schema: structuredContent is the whole InvokeResult, so the
// schema describes it, with "output" the capability's output_schema (or
// null, when the call failed). nil when the capability declares none.
func invokeResultSchema(output json.RawMessage) map[string]any {
	var out map[string]any
	if len(output) == 0 || json.Unmarshal(output, &out) != nil || out == nil {
		return nil
	}
	delete(out, "$schema")
	delete(out, "$id")
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"ok":          map[string]any{"type": "boolean"},
			"output":      map[string]any{"anyOf": []any{out, map[string]any{"type": "null"}}},
			"error":       map[string]any{"type": []any{"object", "null"}},
			"duration_ms": map[string]any{"type": "integer"},
		},
		"required": []any{"ok", "output", "error", "duration_ms"},
	}
}

// toolResult carries an InvokeResult: structuredContent is the whole
// InvokeResult; the text content is the output JSON, or "CODE: message".
func toolResult(res cap.InvokeResult) *mcp.CallToolResult {
	out := &mcp.CallToolResult{StructuredContent: res, IsError: !res.OK}
	text := string(res.Output)
	if !res.OK {
		text = res.Error.Code + ": " + res.Error.Message
	}
	out.Content = []mcp.Content{&mcp.TextContent{Text: text}}
	return out
}

// ToolNames gives every manifest an MCP-legal, unique tool name: the
// capability id without did:nuwa:cap:, with "/" (package/tool) as "__"
// and any other character outside A-Z a-z 0-9 _ - . as "_"; when one id
// has several versions, all but the highest get "__v<version>"; a name
// still taken gets "_2", "_3", ...; at most 128 characters.
func ToolNames(ms []cap.Manifest) map[string]cap.Manifest {
	latest := map[string]string{}
	for _, m := range ms {
		if v, ok := latest[m.CapabilityID]; !ok || cap.CompareForLatest(m.Version, v) > 0 {
			latest[m.CapabilityID] = m.Version
		}
	}
	sorted := slices.Clone(ms)
	slices.SortFunc(sorted, func(a, b cap.Manifest) int {
		if c := strings.Compare(a.CapabilityID, b.CapabilityID); c != 0 {
			return c
		}
		return cap.CompareForLatest(b.Version, a.Version)
	})
	out := make(map[string]cap.Manifest, len(ms))
	for _, m := range sorted {
		base := sanitize(strings.ReplaceAll(strings.TrimPrefix(m.CapabilityID, cap.CapURIPrefix), "/", "__"))
		if m.Version != latest[m.CapabilityID] {
			base += "__v" + sanitize(m.Version)
		}
		out[unique(out, base)] = m
	}
	return out
}

func unique(taken map[string]cap.Manifest, base string) string {
	name := truncate(base, 128)
	for i := 2; ; i++ {
		if _, ok := taken[name]; !ok {
			return name
		}
		suffix := fmt.Sprintf("_%d", i)
		name = truncate(base, 128-len(suffix)) + suffix
	}
}

func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') || r == '_' || r == '-' || r == '.' {
			return r
		}
		return '_'
	}, s)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if n < 1 {
		return "t"
	}
	return s[:n]
}
