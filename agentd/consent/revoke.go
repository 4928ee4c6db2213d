package consent

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/agentnode/agentnode/events"
)

// Revocation is one revoked agent.
type Revocation struct {
	Agent  string    `json:"agent"` // hex pubkey
	Reason string    `json:"reason,omitempty"`
	At     time.Time `json:"at"`
}

// AgentID turns an npub or hex pubkey into lower-case hex, or an error
// wrapping ErrBadAgent.
func AgentID(s string) (string, error) {
	pk, err := events.ParsePubKey(s) // not nip19.Decode: it panics on malformed data
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrBadAgent, err)
	}
	return pk, nil
}

// Revoked reports whether agent (hex) is revoked. It reads memory only,
// unless Config.Refresh is set and the copy is older than that: then it
// reads the list again first, under ctx and for at most Refresh (keeping
// the copy if that fails or ctx ends).
func (c *Consent) Revoked(ctx context.Context, agent string) bool {
	c.mu.Lock()
	stale := c.cfg.Refresh > 0 && c.cfg.Now().Sub(c.loaded) >= c.cfg.Refresh
	c.mu.Unlock()
	if stale {
		ctx, cancel := context.WithTimeout(ctx, c.cfg.Refresh)
		_ = c.Reload(ctx)
		cancel()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.revoked[strings.ToLower(agent)]
}

// Revoke revokes agent (hex or npub): from now on it answers nothing.
// Revoking a revoked agent updates the reason.
func (c *Consent) Revoke(ctx context.Context, agent, reason string) (Revocation, error) {
	id, err := AgentID(agent)
	if err != nil {
		return Revocation{}, err
	}
	r := Revocation{Agent: id, Reason: reason, At: c.cfg.Now().UTC()}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return Revocation{}, ErrClosed
	}
	if err := c.b.PutRevoked(ctx, r); err != nil {
		return Revocation{}, err
	}
	c.revoked[id] = true
	c.notify()
	return r, nil
}

// Unrevoke lifts agent's revocation; it reports whether it was revoked.
func (c *Consent) Unrevoke(ctx context.Context, agent string) (bool, error) {
	id, err := AgentID(agent)
	if err != nil {
		return false, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false, ErrClosed
	}
	was, err := c.b.DeleteRevoked(ctx, id)
	if err != nil {
		return false, err
	}
	delete(c.revoked, id)
	c.notify()
	return was, nil
}

// RevokedList returns the revoked agents, oldest revocation first.
func (c *Consent) RevokedList(ctx context.Context) ([]Revocation, error) {
	return c.b.Revoked(ctx)
}
