package peers

import "github.com/agentnode/agentnode/internal/backoff"

// Backoff is the reconnect schedule: Min, then doubling up to Max, each
// wait jittered down by up to half (backoff.Backoff).
type Backoff = backoff.Backoff

// DefaultBackoff is used when Config.Backoff is zero.
var DefaultBackoff = backoff.Default
