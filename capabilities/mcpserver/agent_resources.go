package mcpserver

import (
	"context"
	"encoding/json"
	"net/url"

	"github.com/agentnode/agentnode/capabilities/cap"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// addManifestResource serves capability m's CAP manifest as the MCP
// resource <capability_id>@<version> (application/json; resources/list,
// resources/read), beside its tool. A capability id that is no URI is
// skipped (the SDK would panic on it).
func addManifestResource(s *mcp.Server, alias string, m cap.Manifest) {
	uri := m.CapabilityID + "@" + m.Version
	if _, err := url.Parse(uri); err != nil {
		return
	}
	body, err := json.Marshal(m)
	if err != nil {
		return
	}
	s.AddResource(&mcp.Resource{URI: uri, Name: alias, Title: m.Name, Description: m.Description, MIMEType: "application/json"},
		func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(body)}}}, nil
		})
}
