package bindings

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agentnode/agentnode/capabilities"
)

// MaxMCPTools bounds the tools taken from one MCP service's tools/list.
const MaxMCPTools = 256

// MCPTools lists the tools of the MCP service at serviceURI (starting it
// if needed) as tool definitions: name, description and input schema; at
// most MaxMCPTools (more is EXECUTION_FAILED).
func (r *Runner) MCPTools(ctx context.Context, serviceURI string) ([]capabilities.ToolDef, error) {
	s, err := r.session(ctx, serviceURI)
	if err != nil {
		return nil, err
	}
	var defs []capabilities.ToolDef
	for t, err := range s.sess.Tools(ctx, nil) {
		if err != nil {
			return nil, &capabilities.Error{Code: capabilities.CodeExecutionFailed, Message: fmt.Sprintf("MCP service %q: tools/list failed", serviceURI), Err: err}
		}
		if len(defs) == MaxMCPTools {
			return nil, capabilities.Errorf(capabilities.CodeExecutionFailed, "MCP service %q lists more than %d tools", serviceURI, MaxMCPTools)
		}
		params, _ := json.Marshal(t.InputSchema)
		if string(params) == "null" {
			params = json.RawMessage(`{"type":"object"}`)
		}
		defs = append(defs, capabilities.ToolDef{Name: t.Name, Description: t.Description, Parameters: params})
	}
	return defs, nil
}
