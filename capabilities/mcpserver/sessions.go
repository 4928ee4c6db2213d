package mcpserver

import (
	"context"
	"net/http"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sessionGate caps live MCP sessions (one gate for /mcp, one for the
// agent endpoints). It counts the sessions of the servers it tracks: the registry's shared
// server, and each agent session's own server once the request that
// created it has returned. The go-sdk (v1.2.0) has an idle timeout
// (StreamableHTTPOptions.SessionTimeout) but no cap.
type sessionGate struct {
	max int

	mu      sync.Mutex
	pending int                  // session-creating requests being served
	servers map[*mcp.Server]bool // true: shared, never pruned
}

// newServerSlot is where serverFor leaves the server it built for the
// request being admitted.
type newServerSlot struct{}

func newSessionGate(max int) *sessionGate {
	return &sessionGate{max: max, servers: map[*mcp.Server]bool{}}
}

// share tracks a server that every session of an endpoint shares.
func (g *sessionGate) share(s *mcp.Server) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.servers[s] = true
}

// created records, from serverFor, the server built for r's new session.
func created(r *http.Request, s *mcp.Server) {
	if slot, ok := r.Context().Value(newServerSlot{}).(**mcp.Server); ok {
		*slot = s
	}
}

// admit serves next, first refusing with 503 a request that would open a
// session (a POST without Mcp-Session-Id) while max sessions are live.
func (g *sessionGate) admit(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get("Mcp-Session-Id") != "" {
			next.ServeHTTP(w, r)
			return
		}
		if !g.reserve() {
			w.Header().Set("Retry-After", "10")
			http.Error(w, "mcp: too many sessions ("+strconv.Itoa(g.max)+"): retry later, and close sessions you no longer use (DELETE)", http.StatusServiceUnavailable)
			return
		}
		var built *mcp.Server
		defer func() { g.release(built) }()
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), newServerSlot{}, &built)))
	})
}

// reserve counts a session-creating request in, if there is room.
func (g *sessionGate) reserve() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.max > 0 && g.live()+g.pending >= g.max {
		return false
	}
	g.pending++
	return true
}

// release ends a session-creating request; built is the per-session
// server it made (nil: none, or a shared one).
func (g *sessionGate) release(built *mcp.Server) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.pending--
	if built != nil {
		g.servers[built] = false
	}
}

// live counts the tracked servers' sessions and forgets per-session
// servers whose session has ended. g.mu is held.
func (g *sessionGate) live() int {
	n := 0
	for s, shared := range g.servers {
		k := 0
		for range s.Sessions() {
			k++
		}
		if k == 0 && !shared {
			delete(g.servers, s)
		}
		n += k
	}
	return n
}

// Live is the number of live MCP sessions (for tests and metrics).
func (g *sessionGate) Live() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.live()
}
