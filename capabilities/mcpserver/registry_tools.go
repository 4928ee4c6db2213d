package mcpserver

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentnode/agentnode/capabilities/acp"
	"github.com/agentnode/agentnode/capabilities/registry"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Registry tool names (Nuwa NIP-7, "Registry MCP Service Interface").
const (
	ToolResolve = "resolve_capability"
	ToolSearch  = "search_capabilities"
)

// ResolveInput is resolve_capability's input.
type ResolveInput struct {
	CapURI string `json:"cap_uri" jsonschema:"did:nuwa:cap:<name>[@<semver>], <name>[@<semver>] or a kind-30199 naddr; no version means the latest"`
	Author string `json:"author,omitempty" jsonschema:"only this author's packages (hex pubkey or npub)"`
}

// SearchInput is search_capabilities' input.
type SearchInput struct {
	QueryString string           `json:"query_string" jsonschema:"words to find in names, descriptions, triggers and tools"`
	Filters     registry.Filters `json:"filters,omitzero" jsonschema:"optional author, tool, permission, limit"`
}

// Result is one package as the registry tools return it: the spec's
// acp_metadata and ipfs_cid (the CIDv1 of the file's bytes, raw codec,
// sha2-256: what IPFS would name it; the node does not pin it), and the
// Nostr coordinates of the package event (event_id, naddr, author) with the
// file's sha256.
type Result struct {
	ACPMetadata  acp.Metadata           `json:"acp_metadata"`
	IPFSCID      string                 `json:"ipfs_cid"`
	URI          string                 `json:"cap_uri"`
	Version      string                 `json:"version"`
	EventID      string                 `json:"event_id"`
	Naddr        string                 `json:"naddr"`
	Author       string                 `json:"author"`
	SHA256       string                 `json:"sha256"`
	CreatedAt    int64                  `json:"created_at"`
	Alternatives []registry.Alternative `json:"alternatives,omitempty"`
}

// SearchOutput is search_capabilities' output: the spec's list_of_results,
// and the same list as results (agentnode's earlier name, kept for its
// callers).
type SearchOutput struct {
	ListOfResults []Result `json:"list_of_results"`
	Results       []Result `json:"results"`
}

func resultOf(e *registry.Entry) Result {
	r := Result{ACPMetadata: e.Metadata, URI: e.URI, Version: e.Version, EventID: e.EventID, Naddr: e.Naddr,
		Author: e.Author, SHA256: e.SHA256(), CreatedAt: e.CreatedAt.Unix(), Alternatives: e.Alternatives}
	r.IPFSCID = acp.CID(r.SHA256)
	if e.Package != nil { // resolved: the fully parsed metadata (llm_requirements, signature too)
		r.ACPMetadata = e.Package.Metadata
	}
	return r
}

// newRegistryServer builds the /mcp server and its two tools.
func newRegistryServer(reg *registry.Registry, opts Options) *mcp.Server {
	s := mcp.NewServer(implementation(opts), &mcp.ServerOptions{Logger: opts.Logger,
		Instructions: "Resolve and search the Agent Capability Packages (kind 30199) this node knows."})
	if reg == nil {
		return s
	}
	mcp.AddTool(s, &mcp.Tool{Name: ToolResolve,
		Description: "Resolve a capability URI (latest or a given version) or naddr to its package metadata and Nostr event."},
		resolveTool(reg))
	mcp.AddTool(s, &mcp.Tool{Name: ToolSearch,
		Description: "Full-text search over published capability packages (latest version per author and name)."},
		searchTool(reg))
	return s
}

func resolveTool(reg *registry.Registry) mcp.ToolHandlerFor[ResolveInput, any] {
	return func(ctx context.Context, _ *mcp.CallToolRequest, in ResolveInput) (*mcp.CallToolResult, any, error) {
		e, err := reg.Resolve(ctx, in.CapURI, in.Author)
		if err != nil {
			return nil, nil, peerError(err)
		}
		return nil, resultOf(e), nil
	}
}

func searchTool(reg *registry.Registry) mcp.ToolHandlerFor[SearchInput, any] {
	return func(ctx context.Context, _ *mcp.CallToolRequest, in SearchInput) (*mcp.CallToolResult, any, error) {
		hits, err := reg.Search(ctx, in.QueryString, in.Filters)
		if err != nil {
			return nil, nil, peerError(err)
		}
		out := SearchOutput{Results: make([]Result, 0, len(hits))}
		for i := range hits {
			out.Results = append(out.Results, resultOf(&hits[i]))
		}
		out.ListOfResults = out.Results
		return nil, out, nil
	}
}

// peerError keeps registry errors (they name only the reference, and an
// ambiguity the candidate authors) and hides anything else.
func peerError(err error) error {
	switch {
	case errors.Is(err, registry.ErrNotFound), errors.Is(err, registry.ErrBadRef), errors.Is(err, registry.ErrBadAuthor),
		errors.Is(err, registry.ErrInvalid), errors.Is(err, registry.ErrAmbiguous):
		return err
	}
	return fmt.Errorf("registry unavailable")
}
