package directory

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/agentnode/agentnode/events"
)

// Errors of unverified registrations.
var (
	// ErrBadClaim: an unverified registration without an id, or with one
	// too long.
	ErrBadClaim = errors.New("bad registration")
	// ErrProvenAgent: the id is an agent registered with a signed proof; an
	// unverified registration may not stand in for it.
	ErrProvenAgent = errors.New("agent registered with proof")
	// ErrTooManyClaims: MaxClaims unverified registrations are listed.
	ErrTooManyClaims = errors.New("too many unverified registrations")
)

// Limits of unverified registrations.
const (
	MaxClaims     = 1000 // listed at once
	MaxClaimIDLen = 256  // bytes of a free-form id
)

// claimPrefix keys unverified entries in Directory.agents: they never
// collide with a hex pubkey.
const claimPrefix = "claim:"

// Claim is an agent/register in the Agent Context Protocol's own form: the
// agent object, with a free-form id and an auth object (token, signature)
// the node cannot check, and no signed kind 30333 proof. The directory
// lists it, marked unverified with the reason, ranked below every proven
// agent; it is never a delegation target.
type Claim struct {
	ID              string
	Name            string
	Tools           []string
	Models          []string
	Specializations []string
	CostPerToken    float64
	Auth            []string // what the auth object's check found ("token verified", "signature unchecked (no key)", ...)
}

// claimState is what an entry keeps of its claim.
type claimState struct {
	id     string // as registered
	reason string
	claim  Claim // as registered (for Registrations)
}

// reason says why the entry is unverified.
func (c Claim) reason() string {
	auth := "no auth"
	if len(c.Auth) > 0 {
		auth = "auth: " + strings.Join(c.Auth, ", ")
	}
	return "registered in the Agent Context Protocol's form with " + auth +
		", without a signed kind 30333 proof of the agent's key"
}

// claimKey is where a claim of id lives: a pubkey id under its hex, any
// other id as written.
func claimKey(id string) string {
	if hex, err := events.ParsePubKey(id); err == nil {
		return claimPrefix + hex
	}
	return claimPrefix + id
}

// RegisterClaim lists an unverified registration (it replaces an earlier
// claim of the same id). It is refused for an id that is a pubkey the
// directory knows from signed events, for an id CheckClaimID refuses, and
// past MaxClaims.
func (d *Directory) RegisterClaim(ctx context.Context, c Claim) (Agent, error) {
	id := strings.TrimSpace(c.ID)
	if !isPubKey(id) {
		if err := CheckClaimID(id); err != nil {
			return Agent{}, err
		}
	}
	c.ID = id
	a, err := d.registerClaim(c)
	if err != nil {
		return Agent{}, err
	}
	return a, d.persistClaim(ctx, claimKey(id), c, events.StatusActive, d.cfg.Now())
}

// registerClaim is RegisterClaim's change to the index.
func (d *Directory) registerClaim(c Claim) (Agent, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if hex, err := events.ParsePubKey(c.ID); err == nil && d.agents[hex] != nil && d.agents[hex].known() {
		return Agent{}, fmt.Errorf("directory: %w: %s has registered with a signed proof; a registration without one cannot stand in for it", ErrProvenAgent, hex)
	}
	key := claimKey(c.ID)
	if d.agents[key] == nil && d.countClaims() >= MaxClaims {
		return Agent{}, fmt.Errorf("directory: %w (%d)", ErrTooManyClaims, MaxClaims)
	}
	e := d.entryFor(key)
	e.claim = &claimState{id: c.ID, reason: c.reason(), claim: c}
	e.card = c.card()
	d.beatClaim(e, events.StatusActive)
	return e.snapshot(d.cfg.Now(), d.cfg.HeartbeatTTL), nil
}

// card is the agent object a claim lists.
func (c Claim) card() *events.AgentCard {
	return &events.AgentCard{ID: c.ID, Name: c.Name, CostMetrics: &events.CostMetrics{CostPerToken: c.CostPerToken},
		Capabilities: &events.CardCapabilities{Tools: c.Tools, Models: c.Models, Specializations: c.Specializations}}
}

// HeartbeatClaim records a heartbeat of an unverified registration
// (status active, busy or offline). ErrUnknownAgent when id has no claim.
func (d *Directory) HeartbeatClaim(ctx context.Context, id, status string) (Agent, error) {
	if status != events.StatusActive && status != events.StatusBusy && status != events.StatusOffline {
		return Agent{}, fmt.Errorf("directory: %w: status %q", ErrBadClaim, status)
	}
	key := claimKey(strings.TrimSpace(id))
	d.mu.Lock()
	e := d.agents[key]
	if e == nil || e.claim == nil {
		d.mu.Unlock()
		return Agent{}, fmt.Errorf("directory: %s: %w", id, ErrUnknownAgent)
	}
	d.beatClaim(e, status)
	a, c := e.snapshot(d.cfg.Now(), d.cfg.HeartbeatTTL), e.claim.claim
	d.mu.Unlock()
	return a, d.persistClaim(ctx, key, c, status, d.cfg.Now())
}

// beatClaim stamps e with a heartbeat of status now.
func (d *Directory) beatClaim(e *entry, status string) {
	e.heartbeat = claimBeat(e.claim.id, status, d.cfg.Now())
	e.registered = true
	d.refresh(e)
}

// claimed returns the entry of an unverified registration of id, or nil.
func (d *Directory) claimed(id string) *entry {
	e := d.agents[claimKey(strings.TrimSpace(id))]
	if e == nil || e.claim == nil {
		return nil
	}
	return e
}

func (d *Directory) countClaims() int {
	n := 0
	for _, e := range d.agents {
		if e.claim != nil {
			n++
		}
	}
	return n
}

// dropClaim removes the unverified registration of pubkey hex, if any.
func (d *Directory) dropClaim(hex string) {
	key := claimPrefix + hex
	e := d.agents[key]
	if e == nil {
		return
	}
	old := e.caps
	e.caps = nil
	d.reindexCaps(e, old)
	delete(d.agents, key)
}
