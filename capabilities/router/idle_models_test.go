package router

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentnode/agentnode/capabilities/acp"
	"github.com/agentnode/agentnode/internal/testkit"
)

func newClock() *testkit.Clock                { return testkit.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)) }
func stackOf(r *Router, conv string) []string { return r.Stack(conv) }

// Each full IdleTimeout of silence pops one entry; a message inside the
// timeout keeps the stack.
func TestRouter_IdleTimeoutPops(t *testing.T) {
	clk := newClock()
	r := NewWith(installed(), Options{IdleTimeout: 10 * time.Minute, Now: clk.Now})
	r.Route("c", "/switch note")
	r.Route("c", "/switch weather")
	clk.Advance(9 * time.Minute)
	if d := r.Route("c", "is it cold"); d.Capability != weatherID || len(d.Popped) != 0 {
		t.Fatalf("inside the timeout: %+v", d)
	}
	clk.Advance(10 * time.Minute)
	d := r.Route("c", "and tomorrow")
	if d.Capability != noteID || d.Reason != ReasonStack || !slices.Equal(d.Popped, []string{weatherID}) {
		t.Fatalf("after one timeout: %+v", d)
	}
	clk.Advance(25 * time.Minute) // two timeouts: pops note, then nothing is left
	d = r.Route("c", "hello")
	if d.Capability != "" || d.Reason != ReasonFallback || !slices.Equal(d.Popped, []string{noteID}) || len(stackOf(r, "c")) != 0 {
		t.Fatalf("after two timeouts: %+v stack %v", d, stackOf(r, "c"))
	}
}

func TestRouter_IdleTimeoutNegativeNever(t *testing.T) {
	clk := newClock()
	r := NewWith(installed(), Options{IdleTimeout: -1, Now: clk.Now})
	r.Route("c", "/switch note")
	clk.Advance(1000 * time.Hour)
	if d := r.Route("c", "more"); d.Capability != noteID || d.Popped != nil {
		t.Errorf("%+v", d)
	}
}

var models = []Model{
	{Name: "llama3.1:8b", Family: "llama3", ContextWindow: 8192, Features: []string{"tool_use"}},
	{Name: "gpt-4o-mini", Family: "gpt-4", ContextWindow: 128000, Features: []string{"tool_use", "function_calling_json_mode"}},
	{Name: "claude-3-5-sonnet", ContextWindow: 200000, Features: []string{"tool_use"}},
}

func TestChooseModel(t *testing.T) {
	tests := []struct {
		name string
		req  *acp.LLMRequires
		want string
		why  string // substring of the refusal
	}{
		{"no requirements: the default", nil, "", ""},
		{"context window", &acp.LLMRequires{MinContextWindow: 16000}, "gpt-4o-mini", ""},
		{"family preferred over order", &acp.LLMRequires{ModelFamily: []string{"claude-3"}, MinContextWindow: 16000}, "claude-3-5-sonnet", ""},
		{"family is a preference, not a requirement", &acp.LLMRequires{ModelFamily: []string{"mistral"}}, "llama3.1:8b", ""},
		{"feature", &acp.LLMRequires{RequiredFeatures: []string{"FUNCTION_CALLING_JSON_MODE"}}, "gpt-4o-mini", ""},
		{"specific model by name", &acp.LLMRequires{SpecificModelURI: "claude-3-5-sonnet"}, "claude-3-5-sonnet", ""},
		{"nothing fits", &acp.LLMRequires{MinContextWindow: 1000000}, "", "llama3.1:8b: context window 8192 < 1000000; gpt-4o-mini: context window 128000 < 1000000"},
		{"no model has the feature", &acp.LLMRequires{RequiredFeatures: []string{"vision"}}, "", `claude-3-5-sonnet: lacks feature "vision"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ChooseModel("did:nuwa:cap:x@1.0.0", tt.req, models)
			var me *ModelError
			if tt.why != "" {
				if !errors.As(err, &me) || !strings.Contains(err.Error(), tt.why) {
					t.Fatalf("err = %v, want ...%s...", err, tt.why)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("ChooseModel = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
	if got, err := ChooseModel("x", &acp.LLMRequires{MinContextWindow: 1 << 30}, nil); got != "" || err != nil {
		t.Errorf("no models configured: %q %v", got, err)
	}
}

// The router chooses the model as it routes, and refuses a capability
// that fits no model with the reason, leaving the stack as it was.
func TestRouter_Models(t *testing.T) {
	routes := installed()
	routes[0].LLM = &acp.LLMRequires{MinContextWindow: 100000}             // note
	routes[1].LLM = &acp.LLMRequires{RequiredFeatures: []string{"vision"}} // weather
	r := NewWith(routes, Options{Models: models})
	d := r.Route("c", "take a note")
	if d.Capability != noteID || d.Model != "gpt-4o-mini" {
		t.Fatalf("note: %+v", d)
	}
	if d := r.Route("c", "more"); d.Model != "gpt-4o-mini" || d.Reason != ReasonStack {
		t.Errorf("stack keeps the model: %+v", d)
	}
	d = r.Route("c", "the weather?")
	if d.Reason != ReasonNoModel || d.Capability != noteID || !strings.Contains(d.Reply, `Weather cannot run here: its llm_requirements fit no configured model (llama3.1:8b: lacks feature "vision"`) {
		t.Errorf("weather: %+v", d)
	}
	if st := r.Stack("c"); !slices.Equal(st, []string{noteID}) {
		t.Errorf("stack after the refusal: %v", st)
	}
	if d := r.Route("c", "/switch weather"); d.Reason != ReasonNoModel || !slices.Equal(r.Stack("c"), []string{noteID}) {
		t.Errorf("/switch weather: %+v", d)
	}
}
