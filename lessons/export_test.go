package lessons

import "context"

// Gather reads the evidence for s from q with DefaultLimits.
func Gather(ctx context.Context, q Querier, s Subject) (*Evidence, error) {
	return GatherLimited(ctx, q, s, DefaultLimits)
}

// DefaultPolicy enables self, owner, definition-author, sibling and
// allowlist (with an empty allowlist); follows is off: NewPolicy(Config{}).
func DefaultPolicy() *Policy {
	p, _ := NewPolicy(Config{})
	return p
}
