package bindings

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/agentnode/agentnode/capabilities"
)

// schemaCache remembers the outputSchema of each MCP tool, by service_uri
// and tool name, once its service has listed its tools.
type schemaCache struct {
	mu   sync.Mutex
	byID map[string]map[string]json.RawMessage // uri -> tool -> outputSchema (nil: none)
}

// MCPOutputSchema returns the outputSchema the MCP service at serviceURI
// declares for its tool action (nil when it declares none), from the
// service's tools/list (paged through; cached per service for the
// Runner's life). An unknown service is NOT_FOUND; an unknown tool is
// NOT_FOUND too.
func (r *Runner) MCPOutputSchema(ctx context.Context, serviceURI, action string) (json.RawMessage, error) {
	tools, err := r.mcpSchemas(ctx, serviceURI)
	if err != nil {
		return nil, err
	}
	s, ok := tools[action]
	if !ok {
		return nil, capabilities.Errorf(capabilities.CodeNotFound, "MCP service %q has no tool %q", serviceURI, action)
	}
	return s, nil
}

func (r *Runner) mcpSchemas(ctx context.Context, uri string) (map[string]json.RawMessage, error) {
	r.schemas.mu.Lock()
	tools, ok := r.schemas.byID[uri]
	r.schemas.mu.Unlock()
	if ok {
		return tools, nil
	}
	s, err := r.session(ctx, uri)
	if err != nil {
		return nil, err
	}
	tools = map[string]json.RawMessage{}
	for t, err := range s.sess.Tools(ctx, nil) {
		if err != nil {
			return nil, &capabilities.Error{Code: capabilities.CodeExecutionFailed, Message: fmt.Sprintf("MCP service %q: tools/list failed", uri), Err: err}
		}
		tools[t.Name] = nil
		if t.OutputSchema != nil {
			if b, err := json.Marshal(t.OutputSchema); err == nil && string(b) != "null" {
				tools[t.Name] = b
			}
		}
	}
	r.schemas.mu.Lock()
	if r.schemas.byID == nil {
		r.schemas.byID = map[string]map[string]json.RawMessage{}
	}
	r.schemas.byID[uri] = tools
	r.schemas.mu.Unlock()
	return tools, nil
}
