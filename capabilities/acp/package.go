package acp

import (
	"encoding/json"
	"regexp"
)

// Package is one parsed Agent Capability Package (.acp.yaml, Nuwa NIP-7).
// Raw is the file exactly as read: it is what is hashed, signed and
// published (the content of a kind-30199 event).
type Package struct {
	Raw      []byte             `json:"-"`
	Metadata Metadata           `json:"metadata"`
	Schema   json.RawMessage    `json:"schema"`           // the JSON Schema 2020-12 document, as JSON
	Prompt   string             `json:"prompt,omitempty"` // the capability's prompt template
	Tools    []Tool             `json:"tools,omitempty"`  // OpenAI function definitions
	Bindings map[string]Binding `json:"tool_bindings,omitempty"`
	// Warnings are what Parse accepted but reports: fields the spec leaves
	// open that agentnode does not read, binding types it cannot run, tools
	// with no binding (docs/INTEROP.md). They never make a package invalid.
	Warnings []Problem `json:"warnings,omitempty"`

	name, version string                     // from Metadata.ID
	schemaURI     string                     // the schema's $id
	params        map[string]json.RawMessage // tool name -> parameters with #/schema inlined
}

// Metadata is the package's metadata section.
type Metadata struct {
	ID          string       `json:"id"`   // did:nuwa:cap:<name>@<semver>
	Name        string       `json:"name"` // display name
	Description string       `json:"description,omitempty"`
	Triggers    []Trigger    `json:"triggers,omitempty"`
	MemoryScope string       `json:"memory_scope,omitempty"` // sc:<name>
	Permissions Permissions  `json:"permissions"`
	LLM         *LLMRequires `json:"llm_requirements,omitempty"`
	Signature   *Signature   `json:"signature,omitempty"`
	// Extra holds the metadata keys agentnode does not read (author,
	// license, ...), as written.
	Extra map[string]any `json:"extra,omitempty"`
}

// Trigger is one routing trigger: regex, keyword or embedding (matched by
// the router with the node's embedding model, when it has one).
type Trigger struct {
	Type  string `json:"type"` // regex | keyword | embedding
	Value string `json:"value"`

	re *regexp.Regexp // regex triggers, compiled by Parse
}

// Trigger types.
const (
	TriggerRegex     = "regex"
	TriggerKeyword   = "keyword"
	TriggerEmbedding = "embedding"
)

// Permissions lists what the capability may do: state.* verbs and
// storage.large.
type Permissions struct {
	Require []string `json:"require"`
}

// LLMRequires is metadata.llm_requirements (advisory).
type LLMRequires struct {
	ModelFamily      []string `json:"model_family,omitempty"`
	SpecificModelURI string   `json:"specific_model_uri,omitempty"`
	MinContextWindow int      `json:"min_context_window,omitempty"`
	RequiredFeatures []string `json:"required_features,omitempty"`
	// Extra holds the fields beyond these four ("Fields can include"), as
	// written.
	Extra map[string]any `json:"extra,omitempty"`
}

// Signature is metadata.signature in one of its two forms (docs/ACP.md):
// agentnode's mapping {pubkey, sig} (a BIP-340 signature by PubKey), or
// the spec's DID-key string (DIDKey: "did:key:z…#z…", or a bare multibase
// "z…" with metadata.author the signer's did:key). Either signs sha256 of
// the file with the signature's value blanked.
type Signature struct {
	PubKey string `json:"pubkey,omitempty"`  // 64-hex x-only key of the author
	Sig    string `json:"sig,omitempty"`     // 128-hex BIP-340 signature
	DIDKey string `json:"did_key,omitempty"` // the DID-key string form, as written
}

// Tool is one OpenAI tool definition ({type: function, function: {...}}).
type Tool struct {
	Type     string   `json:"type"` // "function"
	Function Function `json:"function"`
}

// Function is a tool's function: its name as the model sees it (dots
// allowed here; aliased at the model boundary), and its parameters as a
// JSON Schema with {$ref: "#/schema"} resolved to the package schema.
type Function struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
	// OutputSchema is the JSON Schema of the tool's result, when the
	// package declares one (function.output_schema, or outputSchema as
	// MCP spells it), with {$ref: "#/schema"} inlined. CAP describe and
	// MCP tools/list advertise it; every result is checked against it.
	OutputSchema json.RawMessage `json:"output_schema,omitempty"`
}

// Binding says how the runtime executes a tool that is not built in.
type Binding struct {
	Type          string `json:"type"`                     // http_get | http_post | mcp_service | nuwa_a2a
	URL           string `json:"url,omitempty"`            // http_get, http_post
	ServiceURI    string `json:"service_uri,omitempty"`    // mcp_service
	MCPAction     string `json:"mcp_action,omitempty"`     // mcp_service: the MCP tool name
	TargetDID     string `json:"target_did,omitempty"`     // nuwa_a2a: agent npub/hex/did, or "{arg}" placeholder
	ServiceMethod string `json:"service_method,omitempty"` // nuwa_a2a: the JSON-RPC method on the target
	// Extra holds fields this type does not take (and every field but type
	// of a type agentnode does not know), as written.
	Extra map[string]any `json:"extra,omitempty"`
}

// Callable reports whether the runtime can run b: its type is one of the
// four it knows. A binding of another type is accepted ("include but are
// not limited to") and kept, but calling its tool is an error.
func (b Binding) Callable() bool {
	_, ok := bindingFields[b.Type]
	return ok
}

// Binding types.
const (
	BindHTTPGet    = "http_get"
	BindHTTPPost   = "http_post"
	BindMCPService = "mcp_service"
	BindNuwaA2A    = "nuwa_a2a"
)
