package dm

import (
	"context"
	"errors"
	"log/slog"
	"slices"

	"github.com/nbd-wtf/go-nostr"
)

// dispatch hands queued wraps addressed to a local agent to at most
// MaxConcurrent workers, in queue order, until ctx ends.
func (s *Service) dispatch(ctx context.Context) {
	defer s.wg.Done()
	sem := make(chan struct{}, s.cfg.MaxConcurrent)
	for {
		wrap := s.q.pop(ctx)
		if wrap == nil {
			return
		}
		agent := s.addressee(wrap)
		if agent == "" || s.led.has(wrap.ID) {
			s.q.release(wrap.ID)
			continue
		}
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			return
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer func() { <-sem }()
			defer s.q.release(wrap.ID)
			s.handle(ctx, agent, wrap)
		}()
	}
}

// addressee is the local agent wrap is p-tagged to, or "".
func (s *Service) addressee(wrap *nostr.Event) string {
	agents := s.cfg.Agents()
	for _, tag := range wrap.Tags {
		if len(tag) >= 2 && tag[0] == "p" && slices.Contains(agents, tag[1]) {
			return tag[1]
		}
	}
	return ""
}

// handle answers one wrap to agent and records it as done — unless ctx
// ended first, so that the next start answers it.
func (s *Service) handle(ctx context.Context, agent string, wrap *nostr.Event) {
	log := s.cfg.Logger.With("agent", agent, "wrap", wrap.ID)
	sk, err := s.cfg.Keys(agent)
	if err != nil {
		log.Error("dm: no key for agent; the DM waits for the next start", "err", err)
		return
	}
	msg, err := Unwrap(wrap, sk)
	if err != nil {
		log.Warn("dm: gift wrap dropped", "err", err)
		s.done(log, wrap)
		return
	}
	if why := skip(agent, &msg.Rumor); why != "" {
		log.Debug("dm: rumor not answered", "why", why, "kind", msg.Rumor.Kind)
		s.done(log, wrap)
		return
	}
	if !s.answerAndReply(ctx, log, agent, sk, &msg.Rumor) {
		return
	}
	s.done(log, wrap)
}

// skip says why rumor is not to be answered, or "".
func skip(agent string, rumor *nostr.Event) string {
	switch {
	case rumor.PubKey == agent:
		return "the agent's own copy"
	case rumor.Kind != nostr.KindDirectMessage:
		return "not a kind 14 chat message"
	case !names(rumor, agent):
		return "the rumor is not addressed to the agent"
	}
	return ""
}

// names reports whether rumor p-tags pubkey.
func names(rumor *nostr.Event, pubkey string) bool {
	for _, tag := range rumor.Tags {
		if len(tag) >= 2 && tag[0] == "p" && tag[1] == pubkey {
			return true
		}
	}
	return false
}

// answerAndReply rate-limits the sender, asks the Responder and publishes
// the reply. It returns false if ctx ended before the reply went out.
func (s *Service) answerAndReply(ctx context.Context, log *slog.Logger, agent, sk string, rumor *nostr.Event) bool {
	var text string
	switch s.lim.take(rumor.PubKey) {
	case drop:
		log.Info("dm: rate-limited, message dropped", "from", rumor.PubKey)
		return true
	case notify:
		log.Info("dm: rate-limited, sender told", "from", rumor.PubKey)
		text = s.cfg.RateLimitedText
	case allow:
		text = s.answer(ctx, log, agent, rumor)
	}
	if ctx.Err() != nil {
		return false
	}
	if text == "" { // ErrNoAnswer: handled, nothing to send
		return true
	}
	if err := s.reply(ctx, agent, sk, rumor, text); err != nil {
		log.Error("dm: reply not published", "err", err)
	}
	return ctx.Err() == nil
}

// answer is the Responder's answer to rumor, or the unavailable text if it
// fails or answers nothing.
func (s *Service) answer(ctx context.Context, log *slog.Logger, agent string, rumor *nostr.Event) string {
	rctx, cancel := context.WithTimeout(ctx, s.cfg.RespondTimeout)
	defer cancel()
	text, err := s.cfg.Responder.Respond(rctx, agent, rumor.PubKey, rumor.Content)
	if errors.Is(err, ErrNoAnswer) {
		log.Info("dm: the agent does not answer", "from", rumor.PubKey)
		return ""
	}
	if err != nil || text == "" {
		log.Warn("dm: responder failed; sending the unavailable text", "from", rumor.PubKey, "err", err)
		return s.cfg.UnavailableText
	}
	return text
}

// reply publishes the agent's answer to rumor: to the sender, then the
// agent's own copy.
func (s *Service) reply(ctx context.Context, agent, sk string, rumor *nostr.Event, text string) error {
	out := ReplyRumor(agent, rumor, text, nostr.Timestamp(s.cfg.Now().Unix()))
	toThem, toSelf, err := WrapBoth(out, sk, rumor.PubKey)
	if err != nil {
		return err
	}
	if err := s.cfg.Publish(ctx, toThem); err != nil {
		return err
	}
	return s.cfg.Publish(ctx, toSelf)
}

// done records wrap as processed.
func (s *Service) done(log *slog.Logger, wrap *nostr.Event) {
	if err := s.led.mark(wrap, s.cfg.Now()); err != nil {
		log.Error("dm: state not saved; a restart may answer this DM again", "err", err)
	}
}
