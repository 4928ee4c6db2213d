package modelloop

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/agentnode/agentnode/capabilities"
	"github.com/agentnode/agentnode/capabilities/llm"
)

// Defaults for a Turn's zero fields.
const (
	DefaultMaxSteps    = 8
	DefaultStepTimeout = 2 * time.Minute  // one model call, retries included
	DefaultToolTimeout = 30 * time.Second // one tool call
)

// Completer is a chat model; *llm.Client satisfies it.
type Completer interface {
	Complete(ctx context.Context, req llm.Request) (*llm.Response, error)
}

var _ Completer = (*llm.Client)(nil)

// Turn is one user message to answer.
type Turn struct {
	Model Completer
	// ModelName is sent as each request's model ("" = the Completer's own
	// configured model).
	ModelName string
	System    string        // the capability's prompt or the agent's own; "" = none
	History   []llm.Message // earlier messages of the conversation, oldest first
	User      string        // the user's message; "" = none (History ends with it)
	Tools     []capabilities.ToolDef
	// Allowed is the nudge check made at call time; nil allows all Tools.
	Allowed     func(name string) bool
	Exec        capabilities.ToolCaller
	MaxSteps    int           // model calls; 0 = DefaultMaxSteps
	StepTimeout time.Duration // 0 = DefaultStepTimeout
	ToolTimeout time.Duration // 0 = DefaultToolTimeout
}

// Result is what one Turn produced.
type Result struct {
	Answer    string        // the final assistant text ("" if none)
	Messages  []llm.Message // the new messages: user, assistant, tool..., for the conversation log
	ToolCalls []ToolCallRecord
	Done      bool // a tool result contained {"done": true}
	Steps     int  // model calls made
	Usage     llm.Usage
}

// ToolCallRecord is one tool call the model asked for and what it got.
type ToolCallRecord struct {
	ID        string
	Name      string
	Args      string          // the arguments as the model sent them
	Result    json.RawMessage // the JSON the model was sent back
	ErrorCode string          // "" on success, else a CAP code
	Duration  time.Duration   // time spent checking and executing
}

// Run answers t.User. On ErrStepLimit or a model error the Result holds
// the partial transcript.
func Run(ctx context.Context, t Turn) (*Result, error) {
	if t.Model == nil {
		return nil, ErrNoModel
	}
	t = withDefaults(t)
	ts := newToolset(t.Tools, t.Allowed)
	msgs := initialMessages(t)
	res := &Result{}
	if t.User != "" {
		res.Messages = append(res.Messages, msgs[len(msgs)-1])
	}
	for res.Steps < t.MaxSteps {
		resp, err := step(ctx, t, msgs)
		res.Steps++
		if err != nil {
			return res, fmt.Errorf("modelloop: step %d: %w", res.Steps, err)
		}
		res.Usage = res.Usage.Add(resp.Usage)
		msgs = append(msgs, resp.Message)
		res.Messages = append(res.Messages, resp.Message)
		res.Answer = resp.Message.Content
		if len(resp.Message.ToolCalls) == 0 {
			return res, nil
		}
		toolMsgs, err := runCalls(ctx, t, ts, resp.Message.ToolCalls, res)
		msgs = append(msgs, toolMsgs...)
		res.Messages = append(res.Messages, toolMsgs...)
		if err != nil {
			return res, err
		}
	}
	return res, fmt.Errorf("%w (%d steps)", ErrStepLimit, t.MaxSteps)
}

func withDefaults(t Turn) Turn {
	if t.MaxSteps <= 0 {
		t.MaxSteps = DefaultMaxSteps
	}
	if t.StepTimeout <= 0 {
		t.StepTimeout = DefaultStepTimeout
	}
	if t.ToolTimeout <= 0 {
		t.ToolTimeout = DefaultToolTimeout
	}
	return t
}

func initialMessages(t Turn) []llm.Message {
	msgs := make([]llm.Message, 0, len(t.History)+2)
	if t.System != "" {
		msgs = append(msgs, llm.Message{Role: llm.RoleSystem, Content: t.System})
	}
	msgs = append(msgs, t.History...)
	if t.User != "" {
		msgs = append(msgs, llm.Message{Role: llm.RoleUser, Content: t.User})
	}
	return msgs
}

// step makes one model call under StepTimeout.
func step(ctx context.Context, t Turn, msgs []llm.Message) (*llm.Response, error) {
	ctx, cancel := context.WithTimeout(ctx, t.StepTimeout)
	defer cancel()
	return t.Model.Complete(ctx, llm.Request{Model: t.ModelName, Messages: msgs, Tools: t.Tools})
}
