package bindings_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/agentnode/agentnode/capabilities"
	"github.com/agentnode/agentnode/capabilities/bindings"
)

// The MCP tool's outputSchema comes from the service's tools/list: the
// typed "weather" tool has one, "shout" none, an unknown tool is NOT_FOUND.
func TestRunner_MCPOutputSchema(t *testing.T) {
	srv := inProcessServer(t)
	r := newRunner(t, bindings.Config{MCP: map[string]bindings.MCPEndpoint{"mcp://weather": {URL: srv.URL}}})
	ctx := context.Background()
	s, err := r.MCPOutputSchema(ctx, "mcp://weather", "weather")
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Type       string                     `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(s, &schema); err != nil || schema.Type != "object" || schema.Properties["temp_c"] == nil {
		t.Errorf("weather outputSchema = %s (%v)", s, err)
	}
	if s, err := r.MCPOutputSchema(ctx, "mcp://weather", "shout"); err != nil || s != nil {
		t.Errorf("shout: %s %v", s, err)
	}
	_, err = r.MCPOutputSchema(ctx, "mcp://weather", "nope")
	wantCode(t, err, capabilities.CodeNotFound)
	_, err = r.MCPOutputSchema(ctx, "mcp://nowhere", "x")
	wantCode(t, err, capabilities.CodeNotFound)
}
