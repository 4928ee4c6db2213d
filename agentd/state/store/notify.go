package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
)

// notifier wakes waiters after each committed write: Changed hands out the
// current channel, signal closes it and starts a new one.
type notifier struct {
	mu sync.Mutex
	ch chan struct{}
}

func (n *notifier) wait() <-chan struct{} {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.ch == nil {
		n.ch = make(chan struct{})
	}
	return n.ch
}

func (n *notifier) signal() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.ch != nil {
		close(n.ch)
		n.ch = nil
	}
}

// Changed returns a channel that is closed when the next write transaction
// of this Store commits (a local write, a remote apply, a delete, an
// expiry or a snapshot). Take the channel before reading the op log, then
// wait on it, and no commit is missed:
//
//	for {
//		changed := st.Changed()
//		envs, _ := st.OpsSince(ctx, prefix, cursor, 500)
//		... ship envs ...
//		select { case <-changed: case <-ctx.Done(): return }
//	}
//
// Writes by another process on the same database file are not seen; poll
// OpsSince as well if that matters.
func (s *Store) Changed() <-chan struct{} { return s.changes.wait() }

// LoadSetting returns the value stored under key in the store's settings
// table (asm_meta), or "" if there is none. Replication keeps its cursors
// here, beside the op log they point into. Keys the store uses itself
// ("replica") are not reachable: key must carry a prefix with a colon.
func (s *Store) LoadSetting(ctx context.Context, key string) (string, error) {
	if err := checkSettingKey(key); err != nil {
		return "", err
	}
	var v string
	err := s.db.QueryRowContext(ctx, `SELECT value FROM asm_meta WHERE key = ?`, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("store: read setting: %w", err)
	}
	return v, nil
}

// SaveSetting stores value under key (see LoadSetting).
func (s *Store) SaveSetting(ctx context.Context, key, value string) error {
	if err := checkSettingKey(key); err != nil {
		return err
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO asm_meta (key, value) VALUES (?, ?)
	  ON CONFLICT (key) DO UPDATE SET value = excluded.value`, key, value)
	if err != nil {
		return fmt.Errorf("store: save setting: %w", err)
	}
	return nil
}

func checkSettingKey(key string) error {
	for i := 0; i < len(key); i++ {
		if key[i] == ':' && i > 0 {
			return nil
		}
	}
	return fmt.Errorf("store: setting key %q needs a prefix (\"name:...\")", key)
}
