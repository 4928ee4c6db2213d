package main

import (
	"context"
	"fmt"
	"time"

	"github.com/agentnode/agentnode/agentd/strangers"
	"github.com/agentnode/agentnode/internal/metrics"
)

// serveStrangers is the --config "strangers" section: the budget of what
// senders an agent does not know cost it, shared by NIP-17 DMs and kind
// 25910 calls (docs/DM.md, "Strangers"). A missing rate takes its default.
type serveStrangers struct {
	PerSender serveRate `json:"per_sender"`
	PerAgent  serveRate `json:"per_agent"`
	Global    serveRate `json:"global"`
}

// serveRate is a token bucket: burst messages, then one per every_seconds;
// a negative burst turns it off.
type serveRate struct {
	Burst        int     `json:"burst"`
	EverySeconds float64 `json:"every_seconds"`
}

func (r serveRate) rate() strangers.Rate {
	return strangers.Rate{Burst: r.Burst, Every: time.Duration(r.EverySeconds * float64(time.Second))}
}

// check refuses a rate that cannot work.
func (s serveStrangers) check() error {
	for name, r := range map[string]serveRate{"per_sender": s.PerSender, "per_agent": s.PerAgent, "global": s.Global} {
		if err := r.rate().Check(name); err != nil {
			return fmt.Errorf(`"strangers": %v`, err)
		}
	}
	return nil
}

// strangersBudget is the node's strangers' budget.
func (c *ServeCommand) strangersBudget() *strangers.Budget {
	var s serveStrangers
	if c.file != nil {
		s = c.file.Strangers
	}
	return strangers.New(strangers.Config{PerSender: s.PerSender.rate(), PerAgent: s.PerAgent.rate(), Global: s.Global.rate()})
}

// dmKnown reports whether from is known to agent over DMs: its owner, a
// key of "dm"'s allow list, or a verified sibling.
func (c *ServeCommand) dmKnown(ctx context.Context, agent, from string) bool {
	var d serveSenders
	if c.file != nil {
		d = c.file.DM
	}
	return d.Knows(c.agentOwner(agent), from, c.siblingOwner(ctx, from))
}

// a2aKnown is dmKnown for kind-25910 callers ("a2a"'s allow list).
func (c *ServeCommand) a2aKnown(ctx context.Context, agent, from string) bool {
	var d serveSenders
	if c.file != nil {
		d = c.file.A2A
	}
	return d.Knows(c.agentOwner(agent), from, c.siblingOwner(ctx, from))
}

// strangerStats are the DM service's and the budget's counts for /metrics.
func (c *ServeCommand) strangerStats() metrics.StrangerStats {
	var out metrics.StrangerStats
	if c.rt.dm != nil {
		st := c.rt.dm.Stats()
		out.DMWraps, out.DMMessages = st.Wraps, st.Messages
	}
	if b := c.rt.strangers; b != nil {
		st := b.Stats()
		out.Verdicts = map[string]int64{"known": st.Known, "allowed": st.Allowed, "notified": st.Notified, "dropped": st.Dropped, "refused": st.Refused}
		out.Dry = map[string]int64{"sender": st.DrySender, "agent": st.DryAgent, "global": st.DryGlobal}
	}
	return out
}
