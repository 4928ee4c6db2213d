package dm

import (
	"context"
	"sync"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd/strangers"
)

// job is a message opened and admitted, waiting for a worker.
type job struct {
	agent, sk string
	wrap      *nostr.Event
	rumor     *nostr.Event
	verdict   strangers.Verdict // Known, Allow or Notify
}

// startPipeline starts, owned by pipe, the unwrappers (intake -> lanes)
// and one dispatcher per lane: known senders get up to MaxConcurrent
// workers, strangers up to StrangerWorkers more, so a flood of strangers
// never takes the workers the owner's DM needs.
func (s *Service) startPipeline(ctx context.Context, pipe *sync.WaitGroup) {
	for range s.cfg.Unwrappers {
		pipe.Go(func() { s.unwrapLoop(ctx) })
	}
	pipe.Go(func() { s.dispatch(ctx, s.known, s.cfg.MaxConcurrent) })
	pipe.Go(func() { s.dispatch(ctx, s.strangers, s.cfg.StrangerWorkers) })
}

// unwrapLoop opens the wraps of the intake until ctx ends.
func (s *Service) unwrapLoop(ctx context.Context) {
	for {
		wrap, ok := s.intake.pop(ctx)
		if !ok {
			return
		}
		if !s.sort(ctx, wrap) {
			s.held.del(wrap.ID)
		}
	}
}

// sort opens wrap and queues its message in the lane its sender's verdict
// says; false when it is not queued (garbage, not ours, over the budget).
// Garbage and rumors not to answer are not recorded: the same checks
// reject them again at a restart, and recording them would let junk grow
// the ledger.
func (s *Service) sort(ctx context.Context, wrap *nostr.Event) bool {
	agent := s.addressee(wrap)
	if agent == "" || s.led.Has(wrap.ID) {
		return false
	}
	log := s.cfg.Logger.With("agent", agent, "wrap", wrap.ID)
	sk, err := s.cfg.Keys(ctx, agent)
	if err != nil {
		log.Error("dm: no key for agent; the DM waits for the next start", "err", err)
		return false
	}
	msg, err := Unwrap(wrap, sk)
	if err != nil {
		s.stats.wraps[wrapGarbage].Add(1)
		log.Debug("dm: gift wrap dropped", "err", err)
		return false
	}
	if why := skip(agent, &msg.Rumor); why != "" {
		s.stats.wraps[wrapIgnored].Add(1)
		log.Debug("dm: rumor not answered", "why", why, "kind", msg.Rumor.Kind)
		return false
	}
	return s.admit(ctx, job{agent: agent, sk: sk, wrap: wrap, rumor: &msg.Rumor})
}

// admit asks the Gate what the message may cost and queues it. One over
// the budget, or from a stranger the sender policy refuses, is dropped
// without a reply and remembered in memory only (dropped), not in the
// ledger: a flood of strangers' valid DMs costs
// no disk write each, and a restart, with a refilled budget, may answer a
// few of them late — never more than the budget.
func (s *Service) admit(ctx context.Context, j job) bool {
	j.verdict = strangers.Known
	if s.cfg.Gate != nil {
		j.verdict = s.cfg.Gate.Admit(ctx, j.agent, j.rumor.PubKey)
	}
	lane := s.strangers
	switch j.verdict {
	case strangers.Drop, strangers.Refuse:
		outcome := map[strangers.Verdict]int{strangers.Drop: msgOverBudget, strangers.Refuse: msgRefused}[j.verdict]
		s.stats.messages[outcome].Add(1)
		s.cfg.Logger.Debug("dm: stranger's message dropped", "agent", j.agent, "from", j.rumor.PubKey, "verdict", j.verdict)
		s.dropped.add(j.wrap.ID)
		return false
	case strangers.Known:
		lane = s.known
	}
	if !lane.tryPush(j) {
		s.stats.wraps[wrapDropped].Add(1)
		s.cfg.Logger.Warn("dm: queue full, DM left for the next start", "agent", j.agent, "wrap", j.wrap.ID)
		return false
	}
	return true
}

// dispatch hands the lane's jobs to at most n workers, in order, until ctx
// ends (Run waits for the workers).
func (s *Service) dispatch(ctx context.Context, lane *fifo[job], n int) {
	sem := make(chan struct{}, n)
	for {
		j, ok := lane.pop(ctx)
		if !ok {
			return
		}
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			s.held.del(j.wrap.ID)
			return
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer func() { <-sem }()
			defer s.held.del(j.wrap.ID)
			s.handle(ctx, j)
		}()
	}
}
