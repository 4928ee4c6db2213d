package directory

import (
	"strings"
	"unicode/utf8"

	"github.com/agentnode/agentnode/events"
)

// The directory is an index over the store, not a copy of it: of each
// event it keeps only what it lists and ranks by, each field cut to these
// bounds (docs/DIRECTORY.md#memory). The whole events stay in the store,
// where the web and the ACP read them by id.
const (
	MaxNameRunes   = 128 // a name or title
	MaxTextRunes   = 280 // a role, a review's text
	MaxListItems   = 64  // entries of a list (tools, capabilities, models)
	MaxItemRunes   = 64  // each entry of a list
	maxRefRunes    = 128 // an evaluation's ref
	maxVersionRune = 32  // a definition's version
)

// keep copies s out of the event it came from: the store may decode an
// event's strings from one buffer, and a short string kept in the index
// would hold the whole event in memory.
func keep(s string) string { return strings.Clone(s) }

// clipRunes cuts s to at most n runes (valid UTF-8, trimmed at the cut),
// in a string of its own (keep).
func clipRunes(s string, n int) string {
	if len(s) <= n || utf8.RuneCountInString(s) <= n {
		return keep(s)
	}
	r := []rune(strings.ToValidUTF8(s, ""))
	if len(r) <= n {
		return string(r)
	}
	return strings.TrimSpace(string(r[:n])) + "…"
}

// clipList keeps at most MaxListItems entries, each clipped, in a new slice.
func clipList(list []string) []string {
	if len(list) == 0 {
		return nil
	}
	out := make([]string, 0, min(len(list), MaxListItems))
	for _, v := range list[:min(len(list), MaxListItems)] {
		out = append(out, clipRunes(v, MaxItemRunes))
	}
	return out
}

// compactProfile keeps what the directory reads of a profile.
func compactProfile(p *events.Profile) *events.Profile {
	return &events.Profile{ID: keep(p.ID), PubKey: keep(p.PubKey), CreatedAt: p.CreatedAt, Bot: p.Bot,
		DefinitionID: keep(p.DefinitionID), Owner: keep(p.Owner), Name: clipRunes(p.Name, MaxNameRunes)}
}

// compactHeartbeat keeps what the directory reads of a heartbeat.
func compactHeartbeat(h *events.Heartbeat) *events.Heartbeat {
	return &events.Heartbeat{ID: keep(h.ID), PubKey: keep(h.PubKey), CreatedAt: h.CreatedAt, Agent: keep(h.Agent),
		Status: clipRunes(h.Status, MaxItemRunes), Capacity: h.Capacity, Load: h.Load,
		Capabilities: clipList(h.Capabilities), Expiration: h.Expiration, Card: compactCard(h.Card)}
}

// compactCard keeps the agent object's name, costs and capability lists.
func compactCard(c *events.AgentCard) *events.AgentCard {
	if c == nil {
		return nil
	}
	out := &events.AgentCard{ID: clipRunes(c.ID, MaxClaimIDLen), Name: clipRunes(c.Name, MaxNameRunes)}
	if c.CostMetrics != nil {
		cm := *c.CostMetrics
		out.CostMetrics = &cm
	}
	if cc := c.Capabilities; cc != nil {
		out.Capabilities = &events.CardCapabilities{Tools: clipList(cc.Tools), Models: clipList(cc.Models),
			Specializations: clipList(cc.Specializations)}
	}
	return out
}

// compactEvaluation keeps an evaluation with its text and ref cut.
func compactEvaluation(ev *events.Evaluation) *events.Evaluation {
	return &events.Evaluation{ID: keep(ev.ID), Evaluator: keep(ev.Evaluator), CreatedAt: ev.CreatedAt,
		Agent: keep(ev.Agent), Score: ev.Score, Ref: clipRunes(ev.Ref, maxRefRunes), Review: clipRunes(ev.Review, MaxTextRunes)}
}
