package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/agentnode/agentnode/agentd"
	"github.com/agentnode/agentnode/agentd/agentpg"
	"github.com/agentnode/agentnode/agentd/agentrpc"
	"github.com/agentnode/agentnode/agentd/consent"
	"github.com/agentnode/agentnode/agentd/directory"
	"github.com/agentnode/agentnode/agentd/dm"
	"github.com/agentnode/agentnode/agentd/keystore"
	"github.com/agentnode/agentnode/agentd/state"
	"github.com/agentnode/agentnode/agentd/tasks"
)

// ConfigureConsent decides approvals once for every instance; the others'
// decisions are seen on notification or poll.
func (s *Shared) ConfigureConsent(cfg *consent.Config) {
	cfg.Backend, cfg.Poll, cfg.Refresh = s.db.Consent(), time.Second, 2*time.Second
}

// ConfigureTasks keeps one task store for every instance.
func (s *Shared) ConfigureTasks(cfg *tasks.Config) {
	cfg.Backend, cfg.Poll = s.db.Tasks(), time.Second
}

// ConfigureDirectory keeps the directory's registrations in the database.
func (s *Shared) ConfigureDirectory(cfg *directory.Config) {
	cfg.Registrations = s.db.Registrations()
}

// ConfigureACP makes the instance running an agent execute its tasks
// and forwards the calls naming an agent that
// runs elsewhere (over websockets and in batches: single HTTP calls are
// forwarded whole by Forward). cfg.Local, when set, narrows Runs to the
// installed agents.
func (s *Shared) ConfigureACP(cfg *agentrpc.Config) {
	local := cfg.Local
	cfg.Runs = func(agent string) bool { return (local == nil || local(agent)) && s.Runs(agent) }
	cfg.Forward = s.forwardCall
}

// ConfigureDM answers each DM once across instances; a takeover catches
// up on the agent's.
func (s *Shared) ConfigureDM(ctx context.Context, cfg *dm.Config) error {
	led, err := s.db.Ledger(ctx, dm.DefaultCatchUpWindow)
	if err != nil {
		return fmt.Errorf("cluster: dm ledger: %w", err)
	}
	cfg.Ledger = led
	return nil
}

// ConfigureDaemon points the daemon at the shared keys, records, files,
// token and leases, and its state runtime (cfg.State, set) at the op log.
func (s *Shared) ConfigureDaemon(_ context.Context, cfg *agentd.Config) error {
	if cfg.Passphrase == "" {
		s.log.Warn("agent keys are stored in the shared database as plain hex: set --passphrase-file or AGENTNODE_PASSPHRASE (the same on every instance) to encrypt them (NIP-49)")
	}
	if cfg.State == nil || s.sync == nil {
		return errors.New("cluster: the daemon's state runtime must be opened by OpenState first")
	}
	cfg.Keys = s.db.Keys(keystore.Options{Passphrase: cfg.Passphrase, LogN: cfg.KeyLogN})
	cfg.Records, cfg.Files, cfg.Token, cfg.Placement = s.db.Agents(), s.db.Files(), s.token, s.leases
	cfg.State = &agentpg.StateRuntime{Inner: cfg.State, Sync: s.sync}
	return nil
}

// OpenState makes the SQLite state runtime a cache of the op log:
// schemas and ops of documents of no agent are replayed now, an agent's
// when it is taken over (Handover).
func (s *Shared) OpenState(ctx context.Context, rt *state.Runtime, log *slog.Logger) error {
	register := func(ctx context.Context, capID string, raw []byte) error {
		_, err := rt.Register(ctx, capID, raw)
		return err
	}
	st := rt.Store()
	s.sync = s.db.NewStateSync(st, string(st.Replica()), register, s.h.Lease, log)
	s.h.State = s.sync
	if _, err := s.sync.Takeover(ctx, ""); err != nil {
		return fmt.Errorf("cluster: replay the shared state: %w", err)
	}
	return nil
}

// Join gives every installed agent its lease row (idempotent: it covers
// agents installed before, and an Add that failed at install) and hands
// the daemon and the DMs to the handover.
func (s *Shared) Join(ctx context.Context, l Local) error {
	s.local = l
	s.h.Daemon = l.Agents
	if l.DMs != nil {
		s.h.DMs = l.DMs
	}
	for _, a := range l.Agents.List() {
		if err := s.leases.Add(ctx, a.PubKey); err != nil {
			return fmt.Errorf("cluster: lease for agent %s: %w", a.PubKey, err)
		}
	}
	return nil
}
