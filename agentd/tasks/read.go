package tasks

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Get returns the task with id, or an error wrapping ErrNotFound.
func (s *Store) Get(ctx context.Context, id string) (Task, error) {
	return s.get(ctx, id)
}

func (s *Store) get(ctx context.Context, id string) (Task, error) {
	var doc string
	err := s.db.QueryRowContext(ctx, `SELECT doc FROM tasks WHERE id=?`, id).Scan(&doc)
	if errors.Is(err, sql.ErrNoRows) {
		return Task{}, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	if err != nil {
		return Task{}, fmt.Errorf("tasks: get %s: %w", id, err)
	}
	return decode(doc)
}

func decode(doc string) (Task, error) {
	var t Task
	if err := json.Unmarshal([]byte(doc), &t); err != nil {
		return Task{}, fmt.Errorf("tasks: decode: %w", err)
	}
	return t, nil
}

// Filter selects tasks for List; the zero value selects all.
type Filter struct {
	Status   []Status // any of these (none: any status)
	Assignee string   // hex pubkey ("": any)
	Limit    int      // 0: no cap
}

// List returns the tasks matching f, highest priority first, then oldest.
func (s *Store) List(ctx context.Context, f Filter) ([]Task, error) {
	q, args := listQuery(f)
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("tasks: list: %w", err)
	}
	defer rows.Close()
	out := []Task{}
	for rows.Next() {
		var doc string
		if err := rows.Scan(&doc); err != nil {
			return nil, fmt.Errorf("tasks: list: %w", err)
		}
		t, err := decode(doc)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

func listQuery(f Filter) (string, []any) {
	var where []string
	var args []any
	if len(f.Status) > 0 {
		where = append(where, "status IN (?"+strings.Repeat(",?", len(f.Status)-1)+")")
		for _, st := range f.Status {
			args = append(args, string(st))
		}
	}
	if f.Assignee != "" {
		where = append(where, "assignee = ?")
		args = append(args, f.Assignee)
	}
	q := "SELECT doc FROM tasks"
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY priority DESC, created, id"
	if f.Limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", f.Limit)
	}
	return q, args
}

// Active returns, per assignee, how many of its tasks are assigned or
// running: the load this node itself has put on each agent.
func (s *Store) Active(ctx context.Context) (map[string]int, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT assignee, count(*) FROM tasks WHERE status IN ('assigned','running') AND assignee != '' GROUP BY assignee`)
	if err != nil {
		return nil, fmt.Errorf("tasks: active: %w", err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var a string
		var n int
		if err := rows.Scan(&a, &n); err != nil {
			return nil, fmt.Errorf("tasks: active: %w", err)
		}
		out[a] = n
	}
	return out, rows.Err()
}

// Wait blocks until task id is final (done, failed, expired) and returns
// it, or until ctx ends.
func (s *Store) Wait(ctx context.Context, id string) (Task, error) {
	for {
		s.mu.Lock()
		ch, closed := s.changed, s.closed
		s.mu.Unlock()
		if closed {
			return Task{}, ErrClosed
		}
		t, err := s.get(ctx, id)
		if err != nil || t.Status.Final() {
			return t, err
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return t, ctx.Err()
		}
	}
}
