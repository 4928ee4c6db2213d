package cap

import (
	"context"
	"encoding/json"
	"testing"
)

type oneTool struct{ m Manifest }

func (s oneTool) Capabilities(context.Context, string) ([]Capability, error) {
	return []Capability{{Manifest: s.m}}, nil
}

func (oneTool) Run(context.Context, string, Capability, json.RawMessage) (json.RawMessage, error) {
	return json.RawMessage(`{"ok":true}`), nil
}

// The schema of a manifest is compiled once, however often it is invoked.
func TestHost_Invoke_compilesOnce(t *testing.T) {
	m := Manifest{CapabilityID: "x", Version: "1.0.0", InputSchema: json.RawMessage(`{"type":"object"}`),
		OutputSchema: json.RawMessage(`{"type":"object","required":["ok"]}`)}
	h := NewHost(oneTool{m}, Options{})
	for range 5 {
		if res := h.Invoke(context.Background(), "a", m.Ref(), nil); !res.OK {
			t.Fatal(res.Error)
		}
	}
	if got := len(h.schemas.compiled); got != 2 {
		t.Fatalf("compiled %d schemas, want 2 (input and output, once each)", got)
	}
}
