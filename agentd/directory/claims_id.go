package directory

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentnode/agentnode/events"
)

// claimIDChars are the characters of a free-form agent id besides letters
// and digits: enough for the spec's "agent-id-1", URNs, DIDs, emails and
// paths; no spaces, quotes or controls.
const claimIDChars = "._~:@/+#-"

// CheckClaimID refuses a free-form agent id that is empty, longer than
// MaxClaimIDLen or holds a character other than ASCII letters, digits and
// claimIDChars (ErrBadClaim, with the reason). The same rule holds for
// agent/register, agent/unregister, agent/heartbeat and message targets.
func CheckClaimID(id string) error {
	switch {
	case id == "":
		return fmt.Errorf("directory: %w: agent.id is required", ErrBadClaim)
	case len(id) > MaxClaimIDLen:
		return fmt.Errorf("directory: %w: agent.id is longer than %d bytes", ErrBadClaim, MaxClaimIDLen)
	}
	for _, r := range id {
		if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || strings.ContainsRune(claimIDChars, r)) {
			return fmt.Errorf("directory: %w: agent.id %q: only letters, digits and %s", ErrBadClaim, id, claimIDChars)
		}
	}
	return nil
}

// UnregisterClaim removes the unverified registration of id (ErrUnknownAgent
// when there is none) and forgets it in Registrations.
func (d *Directory) UnregisterClaim(ctx context.Context, id string) error {
	key := claimKey(strings.TrimSpace(id))
	d.mu.Lock()
	e := d.agents[key]
	if e == nil || e.claim == nil {
		d.mu.Unlock()
		return fmt.Errorf("directory: %s: %w", id, ErrUnknownAgent)
	}
	old := e.caps
	e.caps = nil
	d.reindexCaps(e, old)
	delete(d.agents, key)
	d.mu.Unlock()
	if d.cfg.Registrations == nil {
		return nil
	}
	return d.cfg.Registrations.DeleteClaim(ctx, key)
}

// isPubKey reports whether id is a hex or npub key.
func isPubKey(id string) bool {
	_, err := events.ParsePubKey(id)
	return err == nil
}
