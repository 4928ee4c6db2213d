package dm

import "sync/atomic"

// What became of the stored gift wraps that were not answered as messages.
const (
	wrapGarbage = iota // did not open (decrypt, seal signature, impersonation)
	wrapIgnored        // opened, not a DM to answer (the agent's own copy, not kind 14...)
	wrapDropped        // a full queue dropped it: the next start catches up on it
	wrapOutcomes
)

// What became of the DMs opened and addressed to an agent.
const (
	msgAnswered    = iota // a reply was published (the Responder's, or the unavailable text)
	msgRefused            // the Responder answers nothing (dm.ErrNoAnswer: the sender policy, a revoked agent)
	msgRateLimited        // the sender's rate limit: dropped, or told once
	msgNotified           // a stranger whose own budget ran dry was told once
	msgOverBudget         // over the strangers' budget: dropped without a reply
	msgOutcomes
)

// counters are the Service's counts since New.
type counters struct {
	wraps    [wrapOutcomes]atomic.Int64
	messages [msgOutcomes]atomic.Int64
}

// Stats are the DM service's counts since it was built (agentnode serve's
// /metrics: agentnode_dm_wraps_total, agentnode_dm_messages_total).
type Stats struct {
	// Wraps not answered as messages: "garbage", "ignored", "dropped".
	Wraps map[string]int64
	// Messages by outcome: "answered", "refused", "rate_limited",
	// "notified", "over_budget".
	Messages map[string]int64
}

// Stats returns the counts so far.
func (s *Service) Stats() Stats {
	st := Stats{Wraps: map[string]int64{}, Messages: map[string]int64{}}
	for i, name := range [...]string{"garbage", "ignored", "dropped"} {
		st.Wraps[name] = s.stats.wraps[i].Load()
	}
	for i, name := range [...]string{"answered", "refused", "rate_limited", "notified", "over_budget"} {
		st.Messages[name] = s.stats.messages[i].Load()
	}
	return st
}
