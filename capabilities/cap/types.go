package cap

import (
	"context"
	"encoding/json"

	"github.com/agentnode/agentnode/capabilities"
)

// Capability kinds.
const (
	KindTool  = "tool"
	KindSkill = "skill"
)

// Manifest is a CapabilityManifest (CAP 0.1.0 "Capability Manifest"), with
// the spec's JSON names. Absent optional members encode as null.
type Manifest struct {
	CapabilityID        string          `json:"capability_id"`
	Version             string          `json:"version"`
	Kind                string          `json:"kind"` // tool | skill
	Name                string          `json:"name"`
	Description         string          `json:"description"`
	InputSchema         json.RawMessage `json:"input_schema"`
	OutputSchema        json.RawMessage `json:"output_schema"` // null when not declared
	PromptTemplate      *string         `json:"prompt_template"`
	Resources           []Resource      `json:"resources"`
	RequiredPermissions []string        `json:"required_permissions"`
}

// Ref is a CapabilityRef: the only way upper layers name a capability.
type Ref struct {
	CapabilityID string `json:"capability_id"`
	Version      string `json:"version"`
}

// Ref returns m's reference.
func (m Manifest) Ref() Ref { return Ref{CapabilityID: m.CapabilityID, Version: m.Version} }

// Resource is one resource a skill bundles.
type Resource struct {
	URI       string `json:"uri"`
	Name      string `json:"name,omitempty"`
	MediaType string `json:"media_type,omitempty"`
}

// Capability is one capability a Source offers: its manifest and, opaque
// to the Host, whatever the Source needs to run it.
type Capability struct {
	Manifest Manifest
	Impl     any // the Source's own handle (package, tool binding, ...)
	// Hidden: the capability exists but is not offered (a nudge takes the
	// tool away): List and Describe leave it out; Invoke still reaches the
	// Source, whose Run says why it is refused (PERMISSION_DENIED).
	Hidden bool
	// OutputSchema, when set, supplies the output schema of a capability
	// whose manifest declares none (a tool bound to an MCP service learns
	// it from the service). The Host asks it only for what a call shows or
	// runs, once per call: List for the listed capabilities, Describe for
	// the one described, Invoke after a successful run. nil, or a nil
	// answer: no output schema.
	OutputSchema func(ctx context.Context) json.RawMessage
}

// InvokeResult is CAP's invocation result. Output is null unless OK; Error
// is null when OK.
type InvokeResult struct {
	OK         bool                `json:"ok"`
	Output     json.RawMessage     `json:"output"`
	Error      *capabilities.Error `json:"error"`
	DurationMS int64               `json:"duration_ms"`
}

// Source is what the Host serves: the capabilities of an agent and the way
// to run one. The agent daemon implements it.
//
// Capabilities returns every capability agent has (an unknown agent is a
// *capabilities.Error with NOT_FOUND). Run executes c with input (already
// validated against c's input_schema) and returns its JSON output; it must
// honour ctx's deadline, and it returns a *capabilities.Error (wrapped or
// not) for a failure the caller should see coded — PERMISSION_DENIED,
// INVALID_INPUT, ... — anything else is reported as EXECUTION_FAILED
// without its text. Both are called concurrently.
type Source interface {
	Capabilities(ctx context.Context, agent string) ([]Capability, error)
	Run(ctx context.Context, agent string, c Capability, input json.RawMessage) (json.RawMessage, error)
}
