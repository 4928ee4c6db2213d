package agentd

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/events"
	"github.com/agentnode/agentnode/lessons"
)

// Effective returns the agent's effective behaviour: its definition, the
// nudges attached to it, and the lessons its trust policy admits, as
// prompt, tool set and per-lesson provenance (lessons.Effective). The
// result is cached until a stored event changes its inputs (see
// docs/AGENTD.md); do not modify it.
func (d *Daemon) Effective(ctx context.Context, agent string) (lessons.Effective, error) {
	a, err := d.Lookup(agent)
	if err != nil {
		return lessons.Effective{}, err
	}
	c, err := d.compose(ctx, a.PubKey)
	if err != nil {
		return lessons.Effective{}, err
	}
	return c.eff, nil
}

// EffectiveFor is Effective for one incoming message that carries nudges
// (["nudge", <id>] tags): the agent's own nudges, then the message's, are
// combined (lessons.CombineNudges: only-tool fixes the set, deny wins over
// allow). The trust verdicts are the agent's cached ones, so nothing is
// re-read but the message's nudges. A nudge the local relay does not hold
// fails the call (ErrNudgeNotFound) rather than being skipped: a skipped
// deny-tool would hand the agent a tool. Whether the message's sender may
// nudge at all is the transport's decision.
func (d *Daemon) EffectiveFor(ctx context.Context, agent string, messageNudges []string) (lessons.Effective, error) {
	a, err := d.Lookup(agent)
	if err != nil {
		return lessons.Effective{}, err
	}
	c, err := d.compose(ctx, a.PubKey)
	if err != nil || len(messageNudges) == 0 {
		return c.effOrZero(), err
	}
	nudges := slices.Clone(c.subject.Nudges)
	for _, ref := range messageNudges {
		n, err := d.nudge(ctx, ref)
		if err != nil {
			return lessons.Effective{}, err
		}
		if !slices.ContainsFunc(nudges, func(x *events.Nudge) bool { return x.ID == n.ID }) {
			nudges = append(nudges, n)
		}
	}
	return lessons.Compose(c.subject.Definition, nudges, c.verdicts), nil
}

func (c *composition) effOrZero() lessons.Effective {
	if c == nil {
		return lessons.Effective{}
	}
	return c.eff
}

// compose returns the agent's current composition, recomposing it when a
// stored event marked it dirty (or always re-reading, without a notifier).
// Evaluate and Compose are skipped when lessons.Key of the inputs is
// unchanged.
func (d *Daemon) compose(ctx context.Context, pubkey string) (*composition, error) {
	st, ok := d.live.state(pubkey)
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrUnknownAgent, pubkey)
	}
	st.composing.Lock()
	defer st.composing.Unlock()
	gen, info, prev := d.live.snapshot(st)
	if prev != nil && prev.gen == gen && d.cfg.Notifier != nil {
		return prev, nil
	}
	s, missing, err := d.subject(ctx, info)
	if err != nil {
		return nil, err
	}
	ev, err := lessons.GatherLimited(ctx, d.store, s, d.cfg.Limits)
	if err != nil {
		return nil, fmt.Errorf("agentd: %w", err)
	}
	skills, err := d.Skills(pubkey) // skills.go: their instructions close the prompt
	if err != nil {
		return nil, err
	}
	policy := d.policy.Load() // one policy for the key and the verdicts (SetTrust may replace it)
	c := &composition{gen: gen, key: lessons.Key(s, ev, policy) + skillsKey(skills), subject: s, missing: missing, at: time.Now()}
	if prev != nil && prev.key == c.key {
		c.verdicts, c.eff = prev.verdicts, prev.eff
	} else {
		c.verdicts = policy.Evaluate(s, ev)
		c.eff = withSkills(lessons.Compose(s.Definition, s.Nudges, c.verdicts), skills)
	}
	c.index(ev)
	d.live.setCurrent(st, c)
	if !sameReach(prev, c) {
		d.changed()
	}
	return c, nil
}

// subject reads the agent's definition and attached nudges. Nudges the
// store no longer holds (deleted by their author) are left out and listed.
func (d *Daemon) subject(ctx context.Context, info agentInfo) (lessons.Subject, []string, error) {
	def, err := d.definition(ctx, info.defID)
	if err != nil {
		return lessons.Subject{}, nil, err
	}
	s := lessons.Subject{Agent: info.pubkey, Owner: info.owner, Definition: def}
	if len(info.nudges) == 0 {
		return s, nil, nil
	}
	evts, err := d.store.QuerySync(ctx, nostr.Filter{IDs: info.nudges, Kinds: []int{events.KindNudge}, Limit: len(info.nudges)})
	if err != nil {
		return s, nil, fmt.Errorf("agentd: query nudges: %w", err)
	}
	byID := map[string]*events.Nudge{}
	for _, evt := range evts {
		if n, err := events.ParseNudge(evt); err == nil {
			byID[n.ID] = n
		}
	}
	var missing []string
	for _, id := range info.nudges {
		if n := byID[id]; n != nil {
			s.Nudges = append(s.Nudges, n)
		} else {
			missing = append(missing, id)
		}
	}
	return s, missing, nil
}

// index records what the invalidation rules look up: evidence ids, authors
// and the owners those authors name.
func (c *composition) index(ev *lessons.Evidence) {
	c.ids, c.authors, c.owners = map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, list := range [][]*nostr.Event{ev.Lessons, ev.Comments} {
		for _, evt := range list {
			c.ids[evt.ID] = true
			c.authors[evt.PubKey] = true
		}
	}
	for _, evt := range ev.Profiles {
		if p, err := events.ParseProfile(evt); err == nil && p.Owner != "" {
			c.owners[p.Owner] = true
		}
	}
	for _, evt := range ev.Claims {
		c.owners[evt.PubKey] = true
	}
}
