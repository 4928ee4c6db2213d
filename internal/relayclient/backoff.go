package relayclient

import (
	"context"
	"time"

	"github.com/agentnode/agentnode/internal/backoff"
)

// Backoff is backoff.Backoff, the project's one retry schedule (kept
// under this name for the callers that reach it through relayclient).
type Backoff = backoff.Backoff

// DefaultBackoff is backoff.Default.
var DefaultBackoff = backoff.Default

// Sleep is backoff.Sleep: it waits d or until ctx ends and reports
// whether d passed.
func Sleep(ctx context.Context, d time.Duration) bool { return backoff.Sleep(ctx, d) }

// redialBackoff spaces Relay's dials after a failed one (short: a caller
// waits for it).
var redialBackoff = Backoff{Min: 100 * time.Millisecond, Max: 2 * time.Second}
