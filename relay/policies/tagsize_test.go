package policies_test

import (
	"context"
	"maps"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/relay/policies"
)

func TestAgentTagValueLimits_For(t *testing.T) {
	l := policies.AgentTagValueLimits(16 * 1024)
	for kind, want := range map[int]int{0: 65535, 1: 65535, 1111: 65535, 4129: 65535, 4199: 65535, 4201: 65535, 7: 16384, 30023: 16384} {
		if got := l.For(kind); got != want {
			t.Errorf("For(%d) = %d, want %d", kind, got, want)
		}
	}
	if got := policies.AgentTagValueLimits(1 << 20).For(4199); got != 1<<20 {
		t.Errorf("a larger base must hold on agent kinds too: got %d", got)
	}
}

func TestTagValueLimits_Advertised(t *testing.T) {
	got := policies.AgentTagValueLimits(16 * 1024).Advertised()
	want := map[string]int{"0": 65535, "1": 65535, "1111": 65535, "4129": 65535, "4199": 65535, "4201": 65535}
	if !maps.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestRejectOversizedByKind(t *testing.T) {
	reject := policies.RejectOversizedByKind(1000, 10, policies.AgentTagValueLimits(16))
	tests := []struct {
		kind    int
		value   int
		wantMsg string
	}{
		{4199, 40, ""},
		{4199, 70000, `invalid: a "x" tag value is 70000 bytes, the limit for kind 4199 is 65535`},
		{7, 16, ""},
		{7, 17, `invalid: a "x" tag value is 17 bytes, the limit for kind 7 is 16`},
	}
	for _, tt := range tests {
		evt := &nostr.Event{Kind: tt.kind, Tags: nostr.Tags{{"x", strings.Repeat("v", tt.value)}}}
		rejected, msg := reject(context.Background(), evt)
		if rejected != (tt.wantMsg != "") || msg != tt.wantMsg {
			t.Errorf("kind %d, %d bytes: got (%v, %q), want %q", tt.kind, tt.value, rejected, msg, tt.wantMsg)
		}
	}
}
