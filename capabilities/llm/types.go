package llm

import "github.com/agentnode/agentnode/capabilities"

// Message roles.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Message is one chat message. Tool names in it are the caller's own
// (state.create); aliasing happens on the wire only.
type Message struct {
	Role       string     `json:"role"`
	Content    string     `json:"content"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`   // assistant: the tools it calls
	ToolCallID string     `json:"tool_call_id,omitempty"` // tool: the call this answers
	Name       string     `json:"name,omitempty"`         // tool: the tool's name
}

// ToolCall is one function call requested by the model. Arguments is the
// JSON text exactly as the model produced it: it may be invalid.
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Request is one completion request.
type Request struct {
	// Model names the model for this request ("" = the configured one):
	// the router's choice for a capability's llm_requirements.
	Model    string
	Messages []Message
	Tools    []capabilities.ToolDef // offered with tool_choice "auto"; none = plain chat
	// MaxTokens bounds this answer (0 = Config.MaxTokens); a Config.MaxTokens
	// above 0 stays the ceiling: the operator's bound holds for every caller.
	MaxTokens int
	// Temperature is this request's sampling temperature (nil =
	// Config.Temperature).
	Temperature *float64
}

// Response is the first choice of a completion.
type Response struct {
	Message      Message // role assistant; Content and/or ToolCalls
	FinishReason string  // stop, tool_calls, length, ...
	Usage        Usage
	Model        string // the model the provider says answered
}

// Usage counts tokens as the provider reports them.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// Add returns u plus v.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		PromptTokens:     u.PromptTokens + v.PromptTokens,
		CompletionTokens: u.CompletionTokens + v.CompletionTokens,
		TotalTokens:      u.TotalTokens + v.TotalTokens,
	}
}
