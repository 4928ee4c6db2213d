package requester_test

import (
	"context"
	"testing"

	"github.com/agentnode/agentnode/agentd/requester"
)

func TestWithFrom(t *testing.T) {
	ctx := context.Background()
	if got := requester.From(ctx); got != "" {
		t.Fatalf("From(background) = %q", got)
	}
	if got := requester.From(requester.With(ctx, "")); got != "" {
		t.Fatalf("With(\"\") set %q", got)
	}
	inner := requester.With(requester.With(ctx, "a"), "b")
	if got := requester.From(inner); got != "b" {
		t.Fatalf("From = %q, want the innermost b", got)
	}
}
