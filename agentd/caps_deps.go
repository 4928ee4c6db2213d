package agentd

import (
	"context"
	"encoding/json"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd/state"
	"github.com/agentnode/agentnode/agentd/state/schema"
	"github.com/agentnode/agentnode/capabilities/acp"
	"github.com/agentnode/agentnode/capabilities/llm"
)

// The daemon's capability runtime reaches the parts it does not own through
// these small interfaces, set in Config (cmd wires them).

// StateRuntime is the Agent State Model as the daemon uses it;
// *state.Runtime satisfies it.
type StateRuntime interface {
	// CallTool runs a state.* tool as c (errors are *capabilities.Error).
	CallTool(ctx context.Context, c state.Caller, name string, args json.RawMessage) (json.RawMessage, error)
	// Register adds the schema a capability's package declares.
	Register(ctx context.Context, capID string, raw []byte) (*schema.Schema, error)
	// AppendConversation appends one entry to c's ConversationLog.
	AppendConversation(ctx context.Context, c state.Caller, role, content string) (*state.Document, error)
	// EnsureCore creates c's core models (ConversationLog, MemoryStore,
	// AgentSettings) unless they exist; idempotent.
	EnsureCore(ctx context.Context, c state.Caller) error
}

var _ StateRuntime = (*state.Runtime)(nil)

// CapResolver finds a published capability package (kind 30199) by
// reference: did:nuwa:cap:<name>[@<semver>], <name>[@<semver>] or an
// naddr; author ("" = any, by the resolver's rule) narrows it; trusted
// (hex pubkeys, in order: the agent's owner, its definition's author) are
// preferred when several authors publish the name (docs/REGISTRY.md). The
// daemon re-checks the event (acp.FromEvent), so the resolver need not be
// trusted with validation. Not found wraps ErrCapNotFound or the
// resolver's own sentinel.
type CapResolver interface {
	ResolveCapability(ctx context.Context, ref, author string, trusted ...string) (*nostr.Event, error)
}

// BindingCaller runs the tools packages bind. Both methods are part of
// the contract (not an optional interface a decorator could hide: the
// metrics wrapper of serve once did, and schemas silently vanished).
type BindingCaller interface {
	// CallBinding runs one tool call through a package's binding, as
	// agent (64-hex). Errors are *capabilities.Error (wrapped or not).
	CallBinding(ctx context.Context, agent, tool string, b acp.Binding, args json.RawMessage) (json.RawMessage, error)
	// OutputSchema is the output schema of a binding's tool (an
	// mcp_service binding: the backing MCP tool's outputSchema), nil when
	// there is none. CAP and MCP advertise it for a tool whose package
	// declares none, and check results against it.
	OutputSchema(ctx context.Context, b acp.Binding) (json.RawMessage, error)
}

// ChatModel completes a chat turn (OpenAI-compatible); *llm.Client
// satisfies it, and so does any modelloop.Completer.
type ChatModel interface {
	Complete(ctx context.Context, req llm.Request) (*llm.Response, error)
}

var _ ChatModel = (*llm.Client)(nil)
