package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/agentnode/agentnode/agentd"
	"github.com/agentnode/agentnode/agentd/consent"
	"github.com/agentnode/agentnode/events"
	"github.com/agentnode/agentnode/internal/nip98"
)

// Installed lists the agents installed on this node with their owners
// (*agentd.Daemon satisfies it). The console reads it to know which
// agents a signed-in owner may manage; its length is the number of
// agents the operator installed, never something a stranger grows.
type Installed interface {
	List() []agentd.Agent
}

var _ Installed = (*agentd.Daemon)(nil)

// Refusals of an owner's console actions (shown in the console's notice).
var (
	// ErrNotYourAgent: the request or agent belongs to another owner.
	ErrNotYourAgent = errors.New("that agent is not one of yours")
	// ErrNoAgents: the signing key owns no agent on this node.
	ErrNoAgents = errors.New("no agent on this node names this key as its owner")
)

// nostrLogin signs an owner in: the browser's NIP-07 extension signs a
// NIP-98 event for POST <this URL>; the key must own at least one agent
// installed here (so strangers open no sessions). It answers JSON
// {"owner": npub} with the session cookie, or 401/403 {"error": reason}.
func (s *Site) nostrLogin(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 4096)
	owner, err := s.nip98.VerifyFor(r, s.ownsAgents)
	switch {
	case errors.Is(err, ErrNoAgents):
		writeJSON(w, http.StatusForbidden, map[string]string{"error": err.Error()})
		return
	case errors.Is(err, nip98.ErrBusy):
		w.Header().Set("Retry-After", "60")
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": err.Error()})
		return
	case err != nil:
		w.Header().Set("WWW-Authenticate", `Nostr realm="agentnode"`)
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": err.Error()})
		return
	}
	s.startSession(w, r, owner)
	writeJSON(w, http.StatusOK, map[string]string{"owner": npub(owner)})
}

// ownsAgents admits a signer who owns an agent here (ErrNoAgents else).
func (s *Site) ownsAgents(owner string) error {
	if len(s.ownedBy(owner)) == 0 {
		return fmt.Errorf("%w: %s", ErrNoAgents, npub(owner))
	}
	return nil
}

// ownedBy is the installed agents whose owner is owner (hex).
func (s *Site) ownedBy(owner string) []agentd.Agent {
	if s.cfg.Installed == nil || owner == "" {
		return nil
	}
	var out []agentd.Agent
	for _, a := range s.cfg.Installed.List() {
		if a.Owner == owner {
			out = append(out, a)
		}
	}
	return out
}

// ownsFilter reports, for a session of owner ("" the operator: every
// agent) owning agents, whether an agent's key is theirs.
func ownsFilter(owner string, agents []agentd.Agent) func(agent string) bool {
	if owner == "" {
		return func(string) bool { return true }
	}
	keys := make(map[string]bool, len(agents))
	for _, a := range agents {
		keys[a.PubKey] = true
	}
	return func(agent string) bool { return keys[agent] }
}

// mayDecide: the operator decides every request, an owner only their
// agents' requests.
func (s *Site) mayDecide(ctx context.Context, sess session, id string) error {
	if sess.owner == "" {
		return nil
	}
	a, err := s.cfg.Consent.Get(ctx, id)
	if err != nil {
		return err
	}
	if !ownsFilter(sess.owner, s.ownedBy(sess.owner))(a.Agent) {
		return ErrNotYourAgent
	}
	return nil
}

// mayRevoke: the operator revokes any agent, an owner only theirs.
func (s *Site) mayRevoke(sess session, agent string) error {
	if sess.owner == "" {
		return nil
	}
	id, err := events.ParsePubKey(agent)
	if err != nil {
		return fmt.Errorf("%w: want an npub or 64 hex characters", consent.ErrBadAgent)
	}
	if !ownsFilter(sess.owner, s.ownedBy(sess.owner))(id) {
		return ErrNotYourAgent
	}
	return nil
}

// writeJSON answers v as JSON with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
