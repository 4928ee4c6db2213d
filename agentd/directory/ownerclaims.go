package directory

import (
	"context"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/events"
)

// ownerClaims is what the directory keeps of an owner's latest claims
// (kind 14199): not its list, which may name thousands of keys, but the
// listed agents the directory has an entry for. An agent that appears
// later is checked against the stored event then (claimCheck).
type ownerClaims struct {
	id        string
	createdAt nostr.Timestamp
	agents    map[string]bool // listed agents the directory knows
	checked   map[string]bool // agents looked up in the stored event since
}

// claimsFor is the view of c that events.CheckOwnership reads for agent.
func (c *ownerClaims) claimsFor(owner, agent string) *events.OwnerClaims {
	if c == nil {
		return nil
	}
	oc := &events.OwnerClaims{ID: c.id, PubKey: owner, CreatedAt: c.createdAt}
	if c.agents[agent] {
		oc.Agents = []string{agent}
	}
	return oc
}

// applyClaims keeps each owner's latest claims and re-verifies their agents.
func (d *Directory) applyClaims(evt *nostr.Event) bool {
	c, err := events.ParseOwnerClaims(evt)
	if err != nil {
		return false
	}
	if old := d.claims[c.PubKey]; old != nil && !newer(c.CreatedAt, c.ID, old.createdAt, old.id) {
		return true
	}
	oc := &ownerClaims{id: keep(c.ID), createdAt: c.CreatedAt, agents: map[string]bool{}}
	for _, a := range c.Agents {
		if e := d.agents[a]; e != nil {
			oc.agents[e.id] = true
		}
	}
	d.claims[keep(c.PubKey)] = oc
	d.refreshAll(d.byOwner[c.PubKey])
	return true
}

// claimCheck is an agent whose profile names an owner whose kept claims
// do not say whether they list it: the stored claims event decides.
type claimCheck struct {
	owner, agent, claimsID string
}

// needsCheck reports whether e's owner's claims must be read from the
// store to verify e. The caller holds d.mu.
func (d *Directory) needsCheck(e *entry) (claimCheck, bool) {
	p := e.profile
	if p == nil || p.Owner == "" {
		return claimCheck{}, false
	}
	c := d.claims[p.Owner]
	if c == nil || c.agents[e.id] || c.checked[e.id] {
		return claimCheck{}, false
	}
	if c.checked == nil {
		c.checked = map[string]bool{}
	}
	c.checked[e.id] = true
	return claimCheck{owner: p.Owner, agent: e.id, claimsID: c.id}, true
}

// runChecks reads the claims events the checks name (one query per owner,
// by id) and records the agents they list. It takes d.mu itself.
func (d *Directory) runChecks(ctx context.Context, checks []claimCheck) {
	if len(checks) == 0 || d.cfg.Source == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	byID := map[string]*events.OwnerClaims{}
	for _, ck := range checks {
		if _, done := byID[ck.claimsID]; done {
			continue
		}
		byID[ck.claimsID] = nil
		evts, err := d.cfg.Source.QuerySync(ctx, nostr.Filter{IDs: []string{ck.claimsID}, Kinds: []int{events.KindOwnerClaims}, Limit: 1})
		if err == nil && len(evts) == 1 {
			byID[ck.claimsID], _ = events.ParseOwnerClaims(evts[0])
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, ck := range checks {
		c, stored := d.claims[ck.owner], byID[ck.claimsID]
		if c == nil || c.id != ck.claimsID || !stored.Lists(ck.agent) {
			continue
		}
		c.agents[keep(ck.agent)] = true
		if e := d.agents[ck.agent]; e != nil {
			d.refresh(e)
		}
	}
}
