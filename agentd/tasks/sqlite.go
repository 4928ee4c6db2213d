package tasks

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentnode/agentnode/agentd/internal/sqlitedb"
)

// sqliteBackend is Backend on a SQLite file.
type sqliteBackend struct{ db *sql.DB }

var _ Backend = (*sqliteBackend)(nil)

const ddl = `CREATE TABLE IF NOT EXISTS tasks (
	id       TEXT PRIMARY KEY,
	status   TEXT NOT NULL,
	assignee TEXT NOT NULL DEFAULT '',
	deadline INTEGER NOT NULL DEFAULT 0, -- unix ms, 0: none
	priority INTEGER NOT NULL DEFAULT 0,
	created  INTEGER NOT NULL,           -- unix ms
	doc      TEXT NOT NULL               -- the Task as JSON
);
CREATE INDEX IF NOT EXISTS tasks_status ON tasks(status, deadline);`

// OpenSQLite opens (creating if needed) the task file at path: the
// Backend Open uses for Config.Path.
func OpenSQLite(ctx context.Context, path string) (Backend, error) {
	db, err := sqlitedb.Open(ctx, path, ddl)
	if err != nil {
		return nil, fmt.Errorf("tasks: %w", err)
	}
	return &sqliteBackend{db: db}, nil
}

func (b *sqliteBackend) Close() error { return b.db.Close() }

type querier interface {
	QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row
}

func getTask(ctx context.Context, q querier, id string) (Task, error) {
	var doc string
	err := q.QueryRowContext(ctx, `SELECT doc FROM tasks WHERE id=?`, id).Scan(&doc)
	if errors.Is(err, sql.ErrNoRows) {
		return Task{}, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	if err != nil {
		return Task{}, fmt.Errorf("tasks: get %s: %w", id, err)
	}
	return decode(doc)
}

func (b *sqliteBackend) Get(ctx context.Context, id string) (Task, error) {
	return getTask(ctx, b.db, id)
}

func (b *sqliteBackend) Insert(ctx context.Context, t Task) error {
	doc, err := json.Marshal(t)
	if err != nil {
		return fmt.Errorf("tasks: encode %s: %w", t.ID, err)
	}
	res, err := b.db.ExecContext(ctx, `INSERT INTO tasks(id, status, assignee, deadline, priority, created, doc) VALUES(?,?,?,?,?,?,?)
		ON CONFLICT(id) DO NOTHING`,
		t.ID, t.Status, t.Assignee, deadlineMS(t), t.Requirements.Constraints.Priority, t.Created.UnixMilli(), doc)
	if err != nil {
		return fmt.Errorf("tasks: insert %s: %w", t.ID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("%w: %s", ErrExists, t.ID)
	}
	return nil
}

func (b *sqliteBackend) Update(ctx context.Context, id string, change func(*Task) error) (Task, error) {
	tx, err := b.db.BeginTx(ctx, nil) // BEGIN IMMEDIATE: writers are serialised
	if err != nil {
		return Task{}, fmt.Errorf("tasks: update %s: %w", id, err)
	}
	defer tx.Rollback()
	t, err := getTask(ctx, tx, id)
	if err != nil {
		return Task{}, err
	}
	if err := change(&t); err != nil {
		return Task{}, err
	}
	doc, err := json.Marshal(t)
	if err != nil {
		return Task{}, fmt.Errorf("tasks: encode %s: %w", t.ID, err)
	}
	if _, err = tx.ExecContext(ctx, `UPDATE tasks SET status=?, assignee=?, deadline=?, priority=?, doc=? WHERE id=?`,
		t.Status, t.Assignee, deadlineMS(t), t.Requirements.Constraints.Priority, doc, id); err != nil {
		return Task{}, fmt.Errorf("tasks: update %s: %w", id, err)
	}
	if err := tx.Commit(); err != nil {
		return Task{}, fmt.Errorf("tasks: update %s: %w", id, err)
	}
	return t, nil
}

func (b *sqliteBackend) List(ctx context.Context, f Filter) ([]Task, error) {
	q, args := listQuery(f)
	rows, err := b.db.QueryContext(ctx, q, args...)
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

func (b *sqliteBackend) Active(ctx context.Context) (map[string]int, error) {
	rows, err := b.db.QueryContext(ctx, `SELECT assignee, count(*) FROM tasks WHERE status IN ('assigned','running') AND assignee != '' GROUP BY assignee`)
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

func (b *sqliteBackend) Overdue(ctx context.Context, now time.Time) ([]string, error) {
	rows, err := b.db.QueryContext(ctx, `SELECT id FROM tasks WHERE status IN ('pending','assigned','running') AND deadline > 0 AND deadline <= ?`, now.UnixMilli())
	if err != nil {
		return nil, fmt.Errorf("tasks: overdue: %w", err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("tasks: overdue: %w", err)
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}
