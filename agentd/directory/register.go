package directory

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/agentnode/agentnode/events"
	"github.com/nbd-wtf/go-nostr"
)

// Register lists an agent that registered over JSON-RPC (ACP agent/register).
// reg is the proof that the caller holds the agent's key: a kind 30333
// heartbeat signed by the agent (d = its pubkey), status active or busy,
// created_at within ProofWindow of now, the ACP agent object as content
// (docs/DIRECTORY.md#registration). It is published (when the directory has
// a Publisher), so the registration is a heartbeat like any other: the agent
// stays available while it keeps sending them.
func (d *Directory) Register(ctx context.Context, reg *nostr.Event) (Agent, error) {
	h, err := d.checkProof(reg)
	if err != nil {
		return Agent{}, err
	}
	if h.Status == events.StatusOffline {
		return Agent{}, proofErr(h.Agent, ErrBadProof, `a registration's status must be "active" or "busy"`, nil)
	}
	if err := d.publishIfAble(ctx, reg); err != nil {
		return Agent{}, fmt.Errorf("directory: register %s: %w", h.Agent, err)
	}
	if err := d.persistRegistered(ctx, h.Agent, true); err != nil {
		return Agent{}, fmt.Errorf("directory: register %s: %w", h.Agent, err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.applyHeartbeat(h, true)
	d.dropClaim(h.Agent) // proven now: the unverified registration goes
	return d.agents[h.Agent].snapshot(d.cfg.Now(), d.cfg.HeartbeatTTL), nil
}

// Unregister takes a registered agent out of the ranking (ACP
// agent/unregister). proof is the agent's signed kind 30333 with status
// "offline", fresh as for Register; it is published, replacing the agent's
// heartbeat. The agent stays listed (unavailable) if events still describe it.
func (d *Directory) Unregister(ctx context.Context, agentID string, proof *nostr.Event) error {
	agent, err := events.ParsePubKey(agentID)
	if err != nil {
		return fmt.Errorf("directory: unregister: %w: %v", ErrUnknownAgent, err)
	}
	h, err := d.checkProof(proof)
	if err != nil {
		return err
	}
	switch {
	case h.Agent != agent:
		return proofErr(agent, ErrWrongKey, "the proof is signed by "+h.Agent+", not by the agent", nil)
	case h.Status != events.StatusOffline:
		return proofErr(agent, ErrBadProof, `an unregistration's status must be "offline"`, nil)
	case !d.has(agent):
		return fmt.Errorf("directory: unregister %s: %w", agent, ErrUnknownAgent)
	}
	if err := d.publishIfAble(ctx, proof); err != nil {
		return fmt.Errorf("directory: unregister %s: %w", agent, err)
	}
	if err := d.persistRegistered(ctx, agent, false); err != nil {
		return fmt.Errorf("directory: unregister %s: %w", agent, err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.agents[agent].registered = false
	d.applyHeartbeat(h, false)
	return nil
}

// has reports whether agent is listed.
func (d *Directory) has(agent string) bool {
	d.mu.RLock()
	defer d.mu.RUnlock()
	e := d.agents[agent]
	return e != nil && e.known()
}

// checkProof verifies a (un)registration proof: kind, id, signature, signer,
// shape, freshness. It returns the parsed heartbeat.
func (d *Directory) checkProof(evt *nostr.Event) (*events.Heartbeat, error) {
	if evt == nil {
		return nil, proofErr("", ErrBadProof, "no proof event", nil)
	}
	agent := evt.PubKey
	if evt.Kind != events.KindHeartbeat {
		return nil, proofErr(agent, ErrBadProof, fmt.Sprintf("kind %d, want %d", evt.Kind, events.KindHeartbeat), nil)
	}
	if !evt.CheckID() {
		return nil, proofErr(agent, ErrForgedProof, "the id is not the hash of the event", nil)
	}
	if ok, err := evt.CheckSignature(); err != nil || !ok {
		return nil, proofErr(agent, ErrForgedProof, "the signature does not verify", nil)
	}
	if err := checkSigner(evt); err != nil {
		return nil, err
	}
	h, err := events.ParseHeartbeat(evt)
	if err != nil {
		return nil, proofErr(agent, ErrBadProof, err.Error(), err)
	}
	return h, d.checkFresh(h)
}

// checkSigner: the d tag and the agent object's id name the signer.
func checkSigner(evt *nostr.Event) error {
	if dTag := evt.Tags.GetD(); dTag != "" && dTag != evt.PubKey {
		return proofErr(evt.PubKey, ErrWrongKey, "the proof names agent "+dTag+" but is signed by "+evt.PubKey, nil)
	}
	var card struct {
		ID string `json:"id"`
	}
	if json.Unmarshal([]byte(evt.Content), &card) != nil || card.ID == "" {
		return nil
	}
	if id, err := events.ParsePubKey(card.ID); err != nil || id != evt.PubKey {
		return proofErr(evt.PubKey, ErrWrongKey, "the agent object's id "+card.ID+" is not the signing key", nil)
	}
	return nil
}

// checkFresh: created_at within ProofWindow of now, either way.
func (d *Directory) checkFresh(h *events.Heartbeat) error {
	skew := d.cfg.Now().Sub(h.CreatedAt.Time())
	if skew.Abs() > d.cfg.ProofWindow {
		return proofErr(h.Agent, ErrStaleProof, fmt.Sprintf("created_at is %s from now (window %s)",
			skew.Abs().Round(time.Second), d.cfg.ProofWindow), nil)
	}
	return nil
}

// publishIfAble publishes evt when the directory has a Publisher.
func (d *Directory) publishIfAble(ctx context.Context, evt *nostr.Event) error {
	if d.cfg.Publisher == nil {
		return nil
	}
	return d.cfg.Publisher.Publish(ctx, evt)
}
