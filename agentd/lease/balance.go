package lease

import (
	"context"
	"fmt"
	"maps"
	"slices"
)

// announce records this instance as live for one TTL and returns its fair
// share of the agents, ceil(agents / live instances) (0 without Balance).
// An instance that dies drops out of the count when its row expires, at
// the same time as its leases (both are renewed in the same tick, this
// row first).
func (m *Manager) announce(ctx context.Context) (int, error) {
	_, err := m.pool.Exec(ctx, `INSERT INTO agent_instances (instance, url, expires_at) VALUES ($1, $2, now() + $3::interval)
		ON CONFLICT (instance) DO UPDATE SET url = EXCLUDED.url, expires_at = EXCLUDED.expires_at`, m.cfg.Instance, m.cfg.URL, m.cfg.TTL)
	if err != nil {
		return 0, fmt.Errorf("lease: announce: %w", err)
	}
	if _, err := m.pool.Exec(ctx, `DELETE FROM agent_instances WHERE expires_at < now() - interval '1 hour'`); err != nil {
		return 0, fmt.Errorf("lease: forget dead instances: %w", err)
	}
	if !m.cfg.Balance {
		return 0, nil
	}
	var agents, live int
	err = m.pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM agent_leases), (SELECT count(*) FROM agent_instances WHERE expires_at >= now())`).Scan(&agents, &live)
	if err != nil {
		return 0, fmt.Errorf("lease: count instances: %w", err)
	}
	return (agents + max(live, 1) - 1) / max(live, 1), nil
}

// shed hands back the leases held over share (Balance): the last ones by
// agent id, reported lost first.
func (m *Manager) shed(ctx, q context.Context, share int) error {
	if !m.cfg.Balance || share <= 0 {
		return nil
	}
	m.mu.Lock()
	agents := slices.Sorted(maps.Keys(m.held))
	var excess []Lease
	for _, a := range agents[min(share, len(agents)):] {
		excess = append(excess, m.held[a].Lease)
		delete(m.held, a)
	}
	m.mu.Unlock()
	if err := m.report(ctx, excess, false); err != nil {
		return err
	}
	for _, l := range excess {
		if err := m.Release(q, l); err != nil {
			m.cfg.Logger.Warn("lease: hand back", "agent", l.Agent, "err", err)
		}
	}
	return nil
}

// Instances returns the live instances and where they can be reached.
func (m *Manager) Instances(ctx context.Context) (map[string]string, error) {
	rows, err := m.pool.Query(ctx, `SELECT instance, url FROM agent_instances WHERE expires_at >= now()`)
	if err != nil {
		return nil, fmt.Errorf("lease: instances: %w", err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var id, url string
		if err := rows.Scan(&id, &url); err != nil {
			return nil, fmt.Errorf("lease: instances: %w", err)
		}
		out[id] = url
	}
	return out, rows.Err()
}
