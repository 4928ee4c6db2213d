package directory

import (
	"context"
	"slices"

	"github.com/agentnode/agentnode/events"
	"github.com/nbd-wtf/go-nostr"
)

// relevant reports whether evt is of a kind the directory reads.
func relevant(evt *nostr.Event) bool {
	switch evt.Kind {
	case events.KindProfile, events.KindDefinition, events.KindOwnerClaims,
		events.KindHeartbeat, events.KindDeletion:
		return true
	case events.KindLabel:
		return events.IsEvaluation(evt)
	}
	return false
}

// ingest applies one stored event to the index and counts it.
func (d *Directory) ingest(ctx context.Context, evt *nostr.Event) {
	d.mu.Lock()
	ok := d.apply(evt)
	checks := d.checks
	d.checks = nil
	d.mu.Unlock()
	d.runChecks(ctx, checks)
	if ok {
		d.stats.ingested.Add(1)
		return
	}
	d.stats.ignored.Add(1)
	d.log.Debug("directory: event ignored", "id", evt.ID, "kind", evt.Kind, "pubkey", evt.PubKey)
}

// apply dispatches evt by kind; false when it was invalid or irrelevant.
// The caller holds d.mu.
func (d *Directory) apply(evt *nostr.Event) bool {
	switch evt.Kind {
	case events.KindProfile:
		return d.applyProfile(evt)
	case events.KindDefinition:
		return d.applyDefinition(evt)
	case events.KindOwnerClaims:
		return d.applyClaims(evt)
	case events.KindHeartbeat:
		h, err := events.ParseHeartbeat(evt)
		return err == nil && d.applyHeartbeat(h, false)
	case events.KindLabel:
		return d.applyEvaluation(evt)
	case events.KindDeletion:
		return d.applyDeletion(evt)
	}
	return false
}

// entryFor returns the entry of agent, creating it.
func (d *Directory) entryFor(agent string) *entry {
	e := d.agents[agent]
	if e == nil {
		e = &entry{id: agent}
		d.agents[agent] = e
	}
	return e
}

// applyProfile keeps the latest kind 0 of each key; only bot profiles list it.
func (d *Directory) applyProfile(evt *nostr.Event) bool {
	p, err := events.ParseProfile(evt)
	if err != nil {
		return false
	}
	p = compactProfile(p)
	e := d.agents[p.PubKey]
	if e == nil && !p.Bot {
		return false // an ordinary profile of a key the directory does not list
	}
	e = d.entryFor(p.PubKey)
	if old := e.profile; old != nil && !newer(p.CreatedAt, p.ID, old.CreatedAt, old.ID) {
		return true
	}
	d.unlink(e)
	if p.Bot {
		e.profile = p
	} else {
		e.profile = nil // the key's latest profile no longer says it is a bot
	}
	d.link(e)
	d.refresh(e)
	if ck, ok := d.needsCheck(e); ok {
		d.checks = append(d.checks, ck)
	}
	return true
}

// unlink removes e from the owner and definition indexes.
func (d *Directory) unlink(e *entry) {
	if p := e.profile; p != nil {
		delete(d.byOwner[p.Owner], e.id)
		delete(d.byDef[p.DefinitionID], e.id)
	}
}

// link adds e to the owner and definition indexes.
func (d *Directory) link(e *entry) {
	p := e.profile
	if p == nil {
		return
	}
	addTo(d.byOwner, p.Owner, e.id)
	addTo(d.byDef, p.DefinitionID, e.id)
}

// addTo adds v to the set m[k] (nothing for an empty k).
func addTo(m map[string]map[string]bool, k, v string) {
	if k == "" {
		return
	}
	if m[k] == nil {
		m[k] = map[string]bool{}
	}
	m[k][v] = true
}

// applyDefinition indexes a definition and refreshes the agents running it.
func (d *Directory) applyDefinition(evt *nostr.Event) bool {
	def, err := events.ParseDefinition(evt)
	if err != nil {
		return false
	}
	if d.defs[def.ID] != nil {
		return true
	}
	d.addDefinition(def)
	d.refreshAll(d.byDef[def.ID])
	return true
}

// applyHeartbeat keeps the agent's latest heartbeat (and its agent object).
func (d *Directory) applyHeartbeat(h *events.Heartbeat, register bool) bool {
	h = compactHeartbeat(h)
	e := d.entryFor(h.Agent)
	e.registered = e.registered || register || d.stored[h.Agent]
	old := e.heartbeat
	if old == nil || old.ID != h.ID {
		e.beats++ // the same event seen twice (published, then stored) counts once
	}
	if old == nil || newer(h.CreatedAt, h.ID, old.CreatedAt, old.ID) {
		e.heartbeat = h
		if h.Card != nil {
			e.card = h.Card
		}
	}
	d.refresh(e)
	return true
}

// applyEvaluation keeps the latest evaluation per (evaluator, agent).
func (d *Directory) applyEvaluation(evt *nostr.Event) bool {
	ev, err := events.ParseEvaluation(evt)
	if err != nil {
		return false
	}
	ev = compactEvaluation(ev)
	byEval := d.reviews[ev.Agent]
	if byEval == nil {
		byEval = map[string]*events.Evaluation{}
		d.reviews[ev.Agent] = byEval
	}
	if old := byEval[ev.Evaluator]; old != nil && !ev.Supersedes(old) {
		return true
	}
	if old := byEval[ev.Evaluator]; old != nil {
		delete(d.reviewByID, old.ID)
	}
	byEval[ev.Evaluator] = ev
	d.reviewByID[ev.ID] = ev
	if e := d.agents[ev.Agent]; e != nil {
		d.rescore(e)
	}
	return true
}

// applyDeletion retracts evaluations their own author deletes (NIP-09).
func (d *Directory) applyDeletion(evt *nostr.Event) bool {
	for _, t := range evt.Tags {
		if len(t) < 2 || t[0] != "e" {
			continue
		}
		ev := d.reviewByID[t[1]]
		if ev == nil || ev.Evaluator != evt.PubKey {
			continue
		}
		delete(d.reviewByID, ev.ID)
		if d.reviews[ev.Agent][ev.Evaluator] == ev {
			delete(d.reviews[ev.Agent], ev.Evaluator)
		}
		if e := d.agents[ev.Agent]; e != nil {
			d.rescore(e)
		}
	}
	return true
}

// refreshAll refreshes each listed agent.
func (d *Directory) refreshAll(agents map[string]bool) {
	for id := range agents {
		if e := d.agents[id]; e != nil {
			d.refresh(e)
		}
	}
}

// refresh rebuilds e's view from its inputs and rescores it.
func (d *Directory) refresh(e *entry) {
	var def *Definition
	var claims *events.OwnerClaims
	if p := e.profile; p != nil {
		def, claims = d.defs[p.DefinitionID], d.claims[p.Owner].claimsFor(p.Owner, e.id)
	}
	old := e.caps
	e.rebuild(def, claims, d.cfg.Local(e.id))
	d.reindexCaps(e, old)
	d.rescore(e)
}

// reindexCaps moves e in the capability index from its old capabilities to
// its current ones (both sorted, lower-case).
func (d *Directory) reindexCaps(e *entry, old []string) {
	for _, c := range old {
		if _, still := slices.BinarySearch(e.caps, c); !still {
			delete(d.byCap[c], e.id)
			if len(d.byCap[c]) == 0 {
				delete(d.byCap, c)
			}
		}
	}
	for _, c := range e.caps {
		if d.byCap[c] == nil {
			d.byCap[c] = map[string]*entry{}
		}
		d.byCap[c][e.id] = e
	}
}
