package lease

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
)

// maxTakePerTick bounds the leases one tick takes when MaxHeld is 0.
const maxTakePerTick = 1000

// Run renews the leases it holds and takes free or expired ones, at once
// and then every Interval, until ctx ends; it reports every change on
// Changes and closes Changes when it returns (nil when ctx ended). It
// releases nothing: to the database a cancelled Run is a dead instance
// (call ReleaseAll for a clean stop). Database errors are logged and
// retried at the next tick; a lease that could not be renewed before its
// local deadline is reported lost.
func (m *Manager) Run(ctx context.Context) error {
	defer close(m.changes)
	tick := time.NewTicker(m.cfg.Interval)
	defer tick.Stop()
	for {
		if err := m.Tick(ctx); err != nil && ctx.Err() == nil {
			m.cfg.Logger.Warn("lease: tick", "instance", m.cfg.Instance, "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// Tick is one round of Run: announce this instance, renew, hand back what
// is over the fair share (Balance), take free leases. Exported for tests
// and for callers that drive their own clock; do not call it while Run runs.
//
// Its queries share one timeout (budget), so that a database that hangs
// fails the tick in time for leases to be reported lost before they
// expire; reports wait on ctx alone.
func (m *Manager) Tick(ctx context.Context) error {
	q, cancel := context.WithTimeout(ctx, m.budget())
	defer cancel()
	share, err := m.announce(q)
	if err != nil { // still renew: that also reports leases past their deadline
		return errors.Join(err, m.renewAll(ctx, q))
	}
	return errors.Join(m.renewAll(ctx, q), m.shed(ctx, q, share), m.takeFree(ctx, q, share))
}

// budget is how long one tick's queries may take: until the first held
// lease would have to be reported lost (its local deadline less one
// Interval, the consumer's time to stop the agent), at least Interval;
// TTL while none is held. A slow database or a starved CPU thus fails a
// tick only when a lease is at stake, not whenever a tick outlasts a
// fixed Interval.
func (m *Manager) budget() time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, now := m.cfg.TTL, m.cfg.Now()
	for _, h := range m.held {
		b = min(b, h.deadline.Sub(now)-m.cfg.Interval)
	}
	return max(b, m.cfg.Interval)
}

// renewAll extends every held lease in one statement and reports the ones
// that are gone (taken, released, removed) or past their local deadline.
func (m *Manager) renewAll(ctx, q context.Context) error {
	m.mu.Lock()
	agents := slices.Collect(maps.Keys(m.held))
	m.mu.Unlock()
	if len(agents) == 0 {
		return nil
	}
	sent := m.cfg.Now()
	rows, err := m.pool.Query(q, `UPDATE agent_leases SET expires_at = now() + $3::interval
		WHERE holder = $1 AND agent = ANY($2) RETURNING `+leaseCols, m.cfg.Instance, agents, m.cfg.TTL)
	var renewed []Lease
	if err == nil {
		renewed, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (Lease, error) { return scanLease(r) })
	}
	if err != nil {
		return errors.Join(fmt.Errorf("lease: renew: %w", err), m.dropOverdue(ctx, m.cfg.Now()))
	}
	return m.applyRenewals(ctx, agents, renewed, sent)
}

// applyRenewals records the renewed leases and reports the rest as lost.
func (m *Manager) applyRenewals(ctx context.Context, asked []string, renewed []Lease, sent time.Time) error {
	got := map[string]Lease{}
	for _, l := range renewed {
		got[l.Agent] = l
	}
	var lost []Lease
	m.mu.Lock()
	for _, a := range asked {
		h, ok := m.held[a]
		if !ok {
			continue
		}
		if l, ok := got[a]; ok && l.Epoch == h.Epoch {
			m.held[a] = held{Lease: l, deadline: sent.Add(m.cfg.TTL)}
			continue
		}
		delete(m.held, a)
		lost = append(lost, h.Lease)
	}
	m.mu.Unlock()
	return m.report(ctx, lost, false)
}

// dropOverdue reports lost, after a failed renewal, the held leases the
// next tick (within Interval) could no longer renew while one Interval of
// their local deadline is left, the consumer's time to stop the agent:
// the database may let another instance in at the deadline.
func (m *Manager) dropOverdue(ctx context.Context, now time.Time) error {
	var lost []Lease
	m.mu.Lock()
	for a, h := range m.held {
		if !now.Add(2 * m.cfg.Interval).Before(h.deadline) {
			delete(m.held, a)
			lost = append(lost, h.Lease)
		}
	}
	m.mu.Unlock()
	return m.report(ctx, lost, false)
}

// takeFree takes free and expired leases, up to MaxHeld, in one statement;
// rows another instance is taking at the same moment are skipped.
func (m *Manager) takeFree(ctx, q context.Context, share int) error {
	n := m.room(share)
	if n == 0 {
		return nil
	}
	sent := m.cfg.Now()
	rows, err := m.pool.Query(q, `UPDATE agent_leases
		SET holder = $1, holder_url = $4, epoch = nextval('agent_lease_epoch'), acquired_at = now(), expires_at = now() + $2::interval
		WHERE agent IN (SELECT agent FROM agent_leases WHERE expires_at < now()
			ORDER BY expires_at, agent LIMIT $3 FOR UPDATE SKIP LOCKED)
		RETURNING `+leaseCols, m.cfg.Instance, m.cfg.TTL, n, m.cfg.URL)
	var taken []Lease
	if err == nil {
		taken, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (Lease, error) { return scanLease(r) })
	}
	if err != nil {
		return fmt.Errorf("lease: take: %w", err)
	}
	return m.applyTaken(ctx, taken, sent)
}

// room is how many leases takeFree may take now: up to MaxHeld and, with
// Balance, up to share.
func (m *Manager) room(share int) int {
	limit := maxTakePerTick
	if m.cfg.MaxHeld > 0 {
		limit = m.cfg.MaxHeld
	}
	if m.cfg.Balance && share > 0 {
		limit = min(limit, share)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return max(limit-len(m.held), 0)
}

// applyTaken records taken leases; one that replaces an older epoch of
// this instance (it expired and was not renewed in time) is reported lost
// first, so the consumer restarts the agent under the new epoch.
func (m *Manager) applyTaken(ctx context.Context, taken []Lease, sent time.Time) error {
	var lost []Lease
	m.mu.Lock()
	for _, l := range taken {
		if old, ok := m.held[l.Agent]; ok {
			lost = append(lost, old.Lease)
		}
		m.held[l.Agent] = held{Lease: l, deadline: sent.Add(m.cfg.TTL)}
	}
	m.mu.Unlock()
	return errors.Join(m.report(ctx, lost, false), m.report(ctx, taken, true))
}

// report sends one Change per lease, in order, waiting for room.
func (m *Manager) report(ctx context.Context, ls []Lease, isHeld bool) error {
	for _, l := range ls {
		select {
		case m.changes <- Change{Lease: l, Held: isHeld}:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// ReleaseAll frees every lease Run holds (a clean stop: other instances
// take them at their next tick instead of after the TTL). Call it after
// Run returned; its changes are not reported.
func (m *Manager) ReleaseAll(ctx context.Context) error {
	m.mu.Lock()
	ls := make([]Lease, 0, len(m.held))
	for _, h := range m.held {
		ls = append(ls, h.Lease)
	}
	clear(m.held)
	m.mu.Unlock()
	var errs []error
	for _, l := range ls {
		if err := m.Release(ctx, l); err != nil && !errors.Is(err, ErrLost) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
