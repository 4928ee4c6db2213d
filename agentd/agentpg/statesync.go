package agentpg

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"sync"

	"github.com/agentnode/agentnode/agentd/lease"
	"github.com/agentnode/agentnode/agentd/state/store"
)

// StateStore is what StateSync needs of an instance's ASM store
// (*store.Store satisfies it).
type StateStore interface {
	Namespaces(ctx context.Context) ([]string, error)
	OpsSince(ctx context.Context, prefix string, after int64, limit int) ([]store.Envelope, error)
	ApplyRemote(ctx context.Context, envs []store.Envelope) (int, error)
	Schemas(ctx context.Context) ([]store.SchemaRow, error)
	LoadSetting(ctx context.Context, key string) (string, error)
	SaveSetting(ctx context.Context, key, value string) error
}

var _ StateStore = (*store.Store)(nil)

// SchemaRegistrar registers an ASM schema in the instance's runtime
// (*state.Runtime's Register fits).
type SchemaRegistrar func(ctx context.Context, capID string, raw []byte) error

// StateSync keeps an instance's SQLite ASM store and the op log in the
// database in step: Flush appends the ops this instance logged (its
// replica's) to the op log, fenced by the agents' leases; Takeover replays
// an agent's ops from the op log into the store before the agent runs
// here. It is safe for concurrent use.
type StateSync struct {
	log      *OpLog
	st       StateStore
	replica  string
	register SchemaRegistrar
	leases   func(agent string) (lease.Lease, bool)
	logger   *slog.Logger

	mu      sync.Mutex
	cursor  map[string]int64  // namespace -> local seq shipped up to
	dropped map[string]uint64 // agent -> how many times its ops were dropped
}

// flushPage is how many ops Flush reads per namespace per round.
const flushPage = 500

// NewStateSync ties st (whose CRDT replica id is replica) to the op log.
// leases says which agents this instance holds (lease.Manager.Holds);
// register adds a schema to the runtime before ops of it are replayed.
func (db *DB) NewStateSync(st StateStore, replica string, register SchemaRegistrar, leases func(string) (lease.Lease, bool), logger *slog.Logger) *StateSync {
	if logger == nil {
		logger = slog.Default()
	}
	return &StateSync{log: db.OpLog(), st: st, replica: replica, register: register, leases: leases, logger: logger, cursor: map[string]int64{}, dropped: map[string]uint64{}}
}

// cursorKey is where a namespace's cursor lives in the store's settings.
func cursorKey(ns string) string { return "agentpg:oplog:" + ns }

// Flush appends to the op log every op this instance's replica logged
// since the last Flush, in log order: the ops of an agent under its lease,
// the ops of documents of no agent unfenced. It returns the agents whose
// ops it dropped because this instance does not hold (or no longer holds)
// their lease: those writes are not durable and must not be acknowledged.
// Ops of other replicas (replayed from the op log) are not appended again.
func (s *StateSync) Flush(ctx context.Context) (lost []string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	nss, err := s.st.Namespaces(ctx)
	if err != nil {
		return nil, err
	}
	for _, ns := range nss {
		l, err := s.flushNS(ctx, ns)
		lost = append(lost, l...)
		if err != nil {
			return lost, err
		}
	}
	slices.Sort(lost)
	return slices.Compact(lost), nil
}

// flushNS ships one namespace's new ops, page by page.
func (s *StateSync) flushNS(ctx context.Context, ns string) (lost []string, err error) {
	cur, err := s.loadCursor(ctx, ns)
	if err != nil {
		return nil, err
	}
	for {
		envs, err := s.st.OpsSince(ctx, ns, cur, flushPage)
		if err != nil || len(envs) == 0 {
			return lost, err
		}
		l, err := s.ship(ctx, envs)
		lost = append(lost, l...)
		if err != nil {
			return lost, err
		}
		cur = envs[len(envs)-1].Seq
		s.cursor[ns] = cur
		if err := s.st.SaveSetting(ctx, cursorKey(ns), strconv.FormatInt(cur, 10)); err != nil {
			return lost, err
		}
	}
}

func (s *StateSync) loadCursor(ctx context.Context, ns string) (int64, error) {
	if cur, ok := s.cursor[ns]; ok {
		return cur, nil
	}
	v, err := s.st.LoadSetting(ctx, cursorKey(ns))
	if err != nil || v == "" {
		return 0, err
	}
	return strconv.ParseInt(v, 10, 64)
}

// ship appends this replica's envelopes of one page, per agent.
func (s *StateSync) ship(ctx context.Context, envs []store.Envelope) (lost []string, err error) {
	byAgent := map[string][]store.Envelope{}
	var order []string
	for _, e := range envs {
		if string(e.Op.ID.Replica) != s.replica {
			continue
		}
		if _, ok := byAgent[e.Agent]; !ok {
			order = append(order, e.Agent)
		}
		byAgent[e.Agent] = append(byAgent[e.Agent], e)
	}
	for _, agent := range order {
		err := s.appendAgent(ctx, agent, byAgent[agent])
		if errors.Is(err, lease.ErrLost) {
			s.logger.Warn("agentpg: ops of an agent this instance does not hold are not durable", "agent", agent, "ops", len(byAgent[agent]))
			lost = append(lost, agent)
			s.dropped[agent]++
			continue
		}
		if err != nil {
			return lost, err
		}
	}
	return lost, nil
}

func (s *StateSync) appendAgent(ctx context.Context, agent string, envs []store.Envelope) error {
	if agent == "" {
		return s.log.Append(ctx, nil, envs)
	}
	l, ok := s.leases(agent)
	if !ok {
		return fmt.Errorf("%w: %s is not held here", lease.ErrLost, agent)
	}
	return s.log.Append(ctx, &l, envs)
}

// Dropped counts the times ops of agent were dropped by a Flush (its lease
// was lost). A call compares it before and after its own Flush: another
// call's Flush may have shipped, or dropped, its ops.
func (s *StateSync) Dropped(agent string) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dropped[agent]
}

// replayPage is how many ops Takeover applies per round.
const replayPage = 1000

// Takeover makes the store hold every op of agent in the op log (agent ""
// is the documents of no agent: replay those at start): it registers the
// recorded schemas, then applies the agent's ops in append order. For an
// agent it resumes after the last op it replayed before (kept in the
// store's settings): one holder appends an agent's ops at a time, under
// its lease, so positions below that are never filled in later. ApplyRemote
// skips ops the store has. Call it once the lease is held and before the
// agent runs.
func (s *StateSync) Takeover(ctx context.Context, agent string) (applied int, err error) {
	if err := s.registerSchemas(ctx); err != nil {
		return 0, err
	}
	after, err := s.replayCursor(ctx, agent)
	if err != nil {
		return 0, err
	}
	for {
		envs, next, err := s.log.Replay(ctx, agent, after, replayPage)
		if err != nil || len(envs) == 0 {
			return applied, err
		}
		n, err := s.st.ApplyRemote(ctx, envs)
		applied += n
		if err != nil {
			return applied, fmt.Errorf("agentpg: replay %s: %w", agent, err)
		}
		after = next
		if agent != "" {
			if err := s.st.SaveSetting(ctx, replayKey(agent), strconv.FormatInt(after, 10)); err != nil {
				return applied, err
			}
		}
	}
}

// replayKey is where the position replayed up to for agent is kept.
func replayKey(agent string) string { return "agentpg:replayed:" + agent }

// replayCursor is where Takeover resumes for agent: 0 for the documents
// of no agent (several instances append those at once, so a later commit
// may take a lower position).
func (s *StateSync) replayCursor(ctx context.Context, agent string) (int64, error) {
	if agent == "" {
		return 0, nil
	}
	v, err := s.st.LoadSetting(ctx, replayKey(agent))
	if err != nil || v == "" {
		return 0, err
	}
	return strconv.ParseInt(v, 10, 64)
}

// registerSchemas registers the op log's schemas the store lacks.
func (s *StateSync) registerSchemas(ctx context.Context) error {
	have, err := s.st.Schemas(ctx)
	if err != nil {
		return err
	}
	known := map[string]bool{}
	for _, r := range have {
		known[r.URI] = true
	}
	all, err := s.log.Schemas(ctx)
	if err != nil {
		return err
	}
	for _, r := range all {
		if known[r.URI] {
			continue
		}
		if err := s.register(ctx, r.Capability, r.Raw); err != nil {
			return fmt.Errorf("agentpg: register %s: %w", r.URI, err)
		}
	}
	return nil
}

// SaveSchema records a schema the runtime registered (see Runtime).
func (s *StateSync) SaveSchema(ctx context.Context, uri, capID string, raw []byte) error {
	return s.log.SaveSchema(ctx, uri, capID, raw)
}
