package peers

import "github.com/agentnode/agentnode/internal/relayclient"

// Backoff is the reconnect schedule: Min, then doubling up to Max, each
// wait jittered down by up to half (relayclient.Backoff).
type Backoff = relayclient.Backoff

// DefaultBackoff is used when Config.Backoff is zero.
var DefaultBackoff = relayclient.DefaultBackoff
