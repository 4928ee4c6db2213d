package relay

import (
	"context"
	"net/http"
	"syscall"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/internal/memguard"
	"github.com/agentnode/agentnode/relay/internal/khatru"
	"github.com/agentnode/agentnode/relay/policies"
)

// Connection bounds derived from the process's file descriptor limit: a
// websocket holds one descriptor; the stores, HTTP requests, outgoing
// connections and the agents need the rest.
const (
	fdHeadroomMin     = 256     // descriptors always left for everything else
	fdHeadroomShare   = 4       // and at least 1/4 of the limit
	maxConnectionsCap = 100_000 // beyond, memory is the bound, not descriptors
)

// DefaultMaxConnections is the default bound on open websockets: the
// process's RLIMIT_NOFILE (soft, as Go raised it at start) less a
// quarter of it, at least 256 descriptors, kept for everything else; at
// most 100,000, at least 16.
func DefaultMaxConnections() int {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil || rl.Cur == 0 {
		return 1024 - fdHeadroomMin
	}
	return connectionsFor(rl.Cur)
}

// connectionsFor is DefaultMaxConnections for a descriptor limit.
func connectionsFor(nofile uint64) int {
	n := min(nofile, 1<<40)
	headroom := max(n/fdHeadroomShare, fdHeadroomMin)
	if n <= headroom {
		return 16
	}
	return int(max(min(n-headroom, maxConnectionsCap), 16))
}

// memoryBusyReason is the refusal of new work while memory is near the
// ceiling (a message: the wire and HTTP carry it as text).
const memoryBusyReason = "rate-limited: node is busy (memory near its ceiling); try again later"

// wireConnections bounds websockets per client address and in all, and
// sheds new connections, REQ, COUNT and EVENT from clients while the
// memory guard is busy.
func (r *Relay) wireConnections(rl *khatru.Relay) {
	lim := r.cfg.Limits
	r.connLimit = policies.NewConnLimiter(lim.MaxConnectionsPerIP, lim.MaxConnections)
	r.mem = memguard.New(lim.MemoryCeiling)
	rl.AdmitConnection = r.admit
	rl.RejectRequest = append(rl.RejectRequest, func(context.Context, nostr.Filters) (bool, string) {
		return r.mem.Busy(), memoryBusyReason
	})
	rl.RejectEvent = append(rl.RejectEvent, func(ctx context.Context, _ *nostr.Event) (bool, string) {
		// the node's own publishes (no connection) are its work, not new load
		return khatru.GetConnection(ctx) != nil && r.mem.Busy(), memoryBusyReason
	})
}

// admit is khatru's AdmitConnection: the memory guard first, then the
// connection bounds, keyed by policies.ClientIP.
func (r *Relay) admit(req *http.Request) (release func(), status int, reason string) {
	if r.mem.Busy() {
		r.shed.Add(1)
		return nil, http.StatusServiceUnavailable, memoryBusyReason
	}
	release, status, reason = r.connLimit.Admit(policies.ClientIP(req, r.cfg.TrustedProxies))
	if status != 0 {
		r.refusedConns.Add(1)
	}
	return release, status, reason
}

// Busy reports whether the node is shedding new work (memory near its
// ceiling, Limits.MemoryCeiling).
func (r *Relay) Busy() bool { return r.mem.Busy() }

// MemoryCeiling is the ceiling in force in bytes (0: none). The serve
// command makes it the runtime's soft limit (memguard.SetProcessLimit).
func (r *Relay) MemoryCeiling() int64 { return r.mem.Ceiling() }

// Shed serves next unless the node is busy: then it answers 503 with the
// reason and Retry-After, except /healthz (the node is alive, only busy)
// and /metrics (the operator's view of why). Put it in front of every
// HTTP endpoint of the node.
func (r *Relay) Shed(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path == "/healthz" || req.URL.Path == "/metrics" || !r.mem.Busy() {
			next.ServeHTTP(w, req)
			return
		}
		r.shed.Add(1)
		w.Header().Set("Retry-After", "5")
		w.Header().Set("Connection", "close")
		http.Error(w, memoryBusyReason, http.StatusServiceUnavailable)
	})
}
