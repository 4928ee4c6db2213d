package dm

import (
	"context"
	"errors"
	"log/slog"
	"slices"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd/strangers"
)

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

// handle answers one admitted message and records its wrap as done. A
// stop before the reply is prepared leaves the wrap unrecorded (the next
// start answers it); from then on the reply is pending until it is
// published (see ledger).
func (s *Service) handle(ctx context.Context, j job) {
	log := s.cfg.Logger.With("agent", j.agent, "wrap", j.wrap.ID)
	text, ok := s.answerText(ctx, log, j)
	switch {
	case !ok:
		return
	case text == "": // ErrNoAnswer or dropped by the rate limit: nothing to send
		s.done(ctx, log, j.wrap)
		return
	}
	reply, err := s.prepare(j.agent, j.sk, j.rumor, text)
	if err != nil {
		log.Error("dm: reply not prepared", "err", err)
		s.done(ctx, log, j.wrap)
		return
	}
	// Recorded even if ctx ends meanwhile: the reply is prepared (see handle).
	if err := s.led.Begin(context.WithoutCancel(ctx), j.wrap, reply); errors.Is(err, ErrAnswered) {
		log.Info("dm: already answered (by another instance)")
		return
	} else if err != nil {
		log.Error("dm: state not saved; a restart may answer this DM again", "err", err)
	}
	if s.publishReply(ctx, log, j.wrap.ID, j.wrap.CreatedAt, reply) {
		s.stats.messages[msgAnswered].Add(1)
	}
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

// answerText rate-limits the sender and asks the Responder: the text to
// send ("" for none), and false if ctx ended before there was an answer.
// A stranger whose own budget ran dry gets the over-budget notice instead.
func (s *Service) answerText(ctx context.Context, log *slog.Logger, j job) (string, bool) {
	from := j.rumor.PubKey
	if j.verdict == strangers.Notify {
		log.Info("dm: stranger over its budget, sender told", "from", from)
		s.stats.messages[msgNotified].Add(1)
		return s.cfg.OverBudgetText, true
	}
	var text string
	switch s.lim.take(from) {
	case drop:
		log.Info("dm: rate-limited, message dropped", "from", from)
		s.stats.messages[msgRateLimited].Add(1)
		return "", true
	case notify:
		log.Info("dm: rate-limited, sender told", "from", from)
		s.stats.messages[msgRateLimited].Add(1)
		text = s.cfg.RateLimitedText
	case allow:
		text = s.answer(ctx, log, j.agent, j.rumor)
		if text == "" && ctx.Err() == nil {
			s.stats.messages[msgRefused].Add(1)
		}
	}
	return text, ctx.Err() == nil
}

// answer is the Responder's answer to rumor, or the unavailable text if it
// fails or answers nothing.
func (s *Service) answer(ctx context.Context, log *slog.Logger, agent string, rumor *nostr.Event) string {
	rctx, cancel := context.WithTimeout(ctx, s.cfg.RespondTimeout)
	defer cancel()
	text, err := s.cfg.Responder.Respond(rctx, agent, rumor.PubKey, rumor.Content)
	if ctx.Err() != nil {
		return "" // stopped: the next start asks again
	}
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

// prepare is the agent's answer to rumor as the gift wraps to publish, in
// order: to the sender, then the agent's own copy.
func (s *Service) prepare(agent, sk string, rumor *nostr.Event, text string) ([]*nostr.Event, error) {
	out := ReplyRumor(agent, rumor, text, nostr.Timestamp(s.cfg.Now().Unix()))
	toThem, toSelf, err := WrapBoth(out, sk, rumor.PubKey)
	if err != nil {
		return nil, err
	}
	return []*nostr.Event{toThem, toSelf}, nil
}

// publishReply publishes a begun reply's wraps in order and then records
// wrap id (created at) as done, even if ctx ended meanwhile: what is
// stored is answered. If one is not stored (a stop, a failing relay) the
// reply stays pending: the next Run publishes the same events again.
func (s *Service) publishReply(ctx context.Context, log *slog.Logger, id string, at nostr.Timestamp, reply []*nostr.Event) bool {
	for _, evt := range reply {
		if err := s.cfg.Publish(ctx, evt); err != nil {
			log.Warn("dm: reply not published; the next start publishes it again", "err", err)
			return false
		}
	}
	if err := s.led.Mark(context.WithoutCancel(ctx), id, at, s.cfg.Now()); err != nil {
		log.Error("dm: state not saved; the next start publishes this reply again (same ids)", "err", err)
	}
	return true
}

// done records wrap as processed, even if ctx ended meanwhile.
func (s *Service) done(ctx context.Context, log *slog.Logger, wrap *nostr.Event) {
	if err := s.led.Mark(context.WithoutCancel(ctx), wrap.ID, wrap.CreatedAt, s.cfg.Now()); err != nil {
		log.Error("dm: state not saved; a restart may answer this DM again", "err", err)
	}
}
