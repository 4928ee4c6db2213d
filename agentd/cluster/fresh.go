package cluster

import (
	"net/http"
	"sync"
	"time"

	"github.com/agentnode/agentnode/agentd"
	"github.com/agentnode/agentnode/internal/httpauth"
)

// minReloadGap is the least time between two reloads of the installed
// agents asked by requests without the API token.
const minReloadGap = time.Second

// gap lets one thing happen at most once per interval.
type gap struct {
	mu   sync.Mutex
	last time.Time
}

// allow reports whether at least every has passed since the last allowed
// time, and if so makes now the last.
func (g *gap) allow(now time.Time, every time.Duration) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if now.Sub(g.last) < every {
		return false
	}
	g.last = now
	return true
}

// lookupFresh is Agents.Lookup, reading the installed agents again first
// if ref is unknown (installed through another instance, whose
// notification has not arrived yet).
func (s *Shared) lookupFresh(r *http.Request, ref string) (agentd.Agent, error) {
	a, err := s.local.Agents.Lookup(ref)
	if err == nil {
		return a, nil
	}
	if rerr := s.reloadAgents(r); rerr != nil {
		return a, err
	}
	return s.local.Agents.Lookup(ref)
}

// reloadAgents reads the installed agents again for r. A request bearing
// the API token always does (a client reads its own write made through
// another instance); others at most once per minReloadGap, so that
// anonymous requests naming made-up agents cannot turn into a database
// read each.
func (s *Shared) reloadAgents(r *http.Request) error {
	if !s.authorized(r) && !s.reloads.allow(s.cfg.Now(), minReloadGap) {
		return nil
	}
	return s.local.Agents.Reload(r.Context())
}

// authorized reports whether r bears the shared API token.
func (s *Shared) authorized(r *http.Request) bool {
	return httpauth.Equal(s.token, httpauth.Token(r)) == nil
}

// fresh serves the agents' HTTP API after reading the installed agents
// again when the request names an agent this instance does not know, or
// lists them: another instance may have installed or removed one an
// instant ago, and a client that did so through it reads its own write
// here too.
func (s *Shared) fresh(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ref := r.PathValue("agent"); ref != "" {
			_, _ = s.lookupFresh(r, ref)
		} else if r.Method == http.MethodGet {
			if err := s.reloadAgents(r); err != nil {
				s.log.Warn("reading the installed agents", "err", err)
			}
		}
		next.ServeHTTP(w, r)
	})
}
