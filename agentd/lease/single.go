package lease

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Acquire, Renew, Release and Fence are the single-lease primitives Run is
// made of. A Manager that runs Run should leave its leases to it: Run
// renews only what it took.

// Acquire takes agent's lease for this instance if it is free or expired,
// with a new epoch. A lease another instance holds wraps ErrHeld (also one
// this instance holds: Renew that one); no row wraps ErrNotFound.
func (m *Manager) Acquire(ctx context.Context, agent string) (Lease, error) {
	l, err := scanLease(m.pool.QueryRow(ctx, `UPDATE agent_leases
		SET holder = $2, holder_url = $4, epoch = nextval('agent_lease_epoch'), acquired_at = now(), expires_at = now() + $3::interval
		WHERE agent = $1 AND expires_at < now()
		RETURNING `+leaseCols, agent, m.cfg.Instance, m.cfg.TTL, m.cfg.URL))
	if errors.Is(err, pgx.ErrNoRows) {
		cur, gerr := m.Get(ctx, agent)
		if gerr != nil {
			return Lease{}, gerr
		}
		return cur, fmt.Errorf("%w: %s by %s until %s", ErrHeld, agent, cur.Holder, cur.Expires)
	}
	if err != nil {
		return Lease{}, fmt.Errorf("lease: acquire %s: %w", agent, err)
	}
	return l, nil
}

// Renew extends l by the TTL from now. It succeeds while no one else took
// the lease (same holder and epoch), even just past its expiry; otherwise
// it wraps ErrLost.
func (m *Manager) Renew(ctx context.Context, l Lease) (Lease, error) {
	got, err := scanLease(m.pool.QueryRow(ctx, `UPDATE agent_leases SET expires_at = now() + $4::interval
		WHERE agent = $1 AND holder = $2 AND epoch = $3
		RETURNING `+leaseCols, l.Agent, l.Holder, l.Epoch, m.cfg.TTL))
	if errors.Is(err, pgx.ErrNoRows) {
		return Lease{}, fmt.Errorf("%w: %s epoch %d", ErrLost, l.Agent, l.Epoch)
	}
	if err != nil {
		return Lease{}, fmt.Errorf("lease: renew %s: %w", l.Agent, err)
	}
	return got, nil
}

// Release frees l at once, so another instance may take it at its next
// tick. Releasing a lease no longer held wraps ErrLost.
func (m *Manager) Release(ctx context.Context, l Lease) error {
	tag, err := m.pool.Exec(ctx, `UPDATE agent_leases SET holder = '', holder_url = '', expires_at = '-infinity'
		WHERE agent = $1 AND holder = $2 AND epoch = $3`, l.Agent, l.Holder, l.Epoch)
	if err != nil {
		return fmt.Errorf("lease: release %s: %w", l.Agent, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("%w: %s epoch %d", ErrLost, l.Agent, l.Epoch)
	}
	return nil
}

// Querier is what Fence runs its check on: a pgx.Tx (or a *pgx.Conn or
// *pgxpool.Pool, though only a transaction makes the check hold).
type Querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// Fence checks, inside the caller's transaction q, that l is still its
// holder's (same holder and epoch; expiry is not checked: no one else can
// have taken it while the epoch is unchanged) and share-locks the lease
// row until q ends: a takeover's Acquire waits for q to commit, so every
// write fenced by l is visible to the new holder. A lost lease wraps ErrLost.
func Fence(ctx context.Context, q Querier, l Lease) error {
	var one int
	err := q.QueryRow(ctx, `SELECT 1 FROM agent_leases WHERE agent = $1 AND holder = $2 AND epoch = $3 FOR SHARE`,
		l.Agent, l.Holder, l.Epoch).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("%w: %s epoch %d", ErrLost, l.Agent, l.Epoch)
	}
	if err != nil {
		return fmt.Errorf("lease: fence %s: %w", l.Agent, err)
	}
	return nil
}
