package relayclient

import (
	"time"

	"github.com/agentnode/agentnode/internal/backoff"
)

// Backoff is backoff.Backoff, the project's one retry schedule (kept
// under this name for the callers that reach it through relayclient).
type Backoff = backoff.Backoff

// DefaultBackoff is backoff.Default.
var DefaultBackoff = backoff.Default

// Sleep is backoff.Sleep.
var Sleep = backoff.Sleep

// redialBackoff spaces Relay's dials after a failed one (short: a caller
// waits for it).
var redialBackoff = Backoff{Min: 100 * time.Millisecond, Max: 2 * time.Second}
