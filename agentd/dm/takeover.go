package dm

import (
	"context"
	"errors"
	"fmt"
)

// Reloader is a Ledger that can read its state again: one that several
// instances share (agentd/agentpg.Ledger).
type Reloader interface {
	Reload(ctx context.Context) error
}

// TakeOver is what an instance does when it starts answering agent in
// place of another (agentd/lease): it reloads a shared ledger (Reloader),
// publishes again the replies left pending (also the previous holder's:
// the same events, which the relay takes silently), and queues agent's
// wraps stored since the ledger's starting point that nobody answered.
// Config.Agents must list agent by then. Call it once Run is Ready.
func (s *Service) TakeOver(ctx context.Context, agent string) error {
	if s.led == nil {
		return errors.New("dm: take over before Run is ready")
	}
	if r, ok := s.led.(Reloader); ok {
		if err := r.Reload(ctx); err != nil {
			return fmt.Errorf("dm: take over %s: %w", agent, err)
		}
	}
	if err := s.resend(ctx); err != nil {
		return err
	}
	if err := s.eachStoredWrap(ctx, agent, s.led.Since(s.cfg.Now()), s.feed); err != nil {
		return fmt.Errorf("dm: take over %s: %w", agent, err)
	}
	return nil
}
