package agentpg

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentnode/agentnode/agentd/tasks"
)

// Tasks is tasks.Backend in the database: every instance's Store sees one
// queue; Update locks the task's row (SELECT ... FOR UPDATE), so racing
// transitions from two instances apply one after the other, and announces
// the change (TopicTasks: wake the other instances' waits).
type Tasks struct{ db *DB }

var _ tasks.Backend = (*Tasks)(nil)

// Tasks returns the task backend (give it to tasks.Config.Backend).
func (db *DB) Tasks() *Tasks { return &Tasks{db: db} }

// Close is a no-op: the DB owns the connections.
func (b *Tasks) Close() error { return nil }

func decodeTask(doc string) (tasks.Task, error) {
	var t tasks.Task
	if err := json.Unmarshal([]byte(doc), &t); err != nil {
		return tasks.Task{}, fmt.Errorf("tasks: decode: %w", err)
	}
	return t, nil
}

func getTask(ctx context.Context, q querier, id, lock string) (tasks.Task, error) {
	var doc string
	err := q.QueryRow(ctx, `SELECT doc FROM agentpg_tasks WHERE id = $1`+lock, id).Scan(&doc)
	if errors.Is(err, pgx.ErrNoRows) {
		return tasks.Task{}, fmt.Errorf("%w: %s", tasks.ErrNotFound, id)
	}
	if err != nil {
		return tasks.Task{}, fmt.Errorf("tasks: get %s: %w", id, err)
	}
	return decodeTask(doc)
}

// querier is a pool, connection or transaction.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// Get returns task id.
func (b *Tasks) Get(ctx context.Context, id string) (tasks.Task, error) {
	return getTask(ctx, b.db.pool, id, "")
}

func deadlineMS(t tasks.Task) int64 {
	if d := t.Requirements.Constraints.Deadline; !d.IsZero() {
		return d.UnixMilli()
	}
	return 0
}

// Insert stores a new task.
func (b *Tasks) Insert(ctx context.Context, t tasks.Task) error {
	doc, err := json.Marshal(t)
	if err != nil {
		return fmt.Errorf("tasks: encode %s: %w", t.ID, err)
	}
	tag, err := b.db.pool.Exec(ctx, `INSERT INTO agentpg_tasks (id, status, assignee, deadline, priority, created, doc)
		VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (id) DO NOTHING`,
		t.ID, string(t.Status), t.Assignee, deadlineMS(t), t.Requirements.Constraints.Priority, t.Created.UnixMilli(), string(doc))
	if err != nil {
		return fmt.Errorf("tasks: insert %s: %w", t.ID, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("%w: %s", tasks.ErrExists, t.ID)
	}
	return nil
}

// Update edits task id under its row lock.
func (b *Tasks) Update(ctx context.Context, id string, change func(*tasks.Task) error) (tasks.Task, error) {
	var out tasks.Task
	err := pgx.BeginFunc(ctx, b.db.pool, func(tx pgx.Tx) error {
		t, err := getTask(ctx, tx, id, " FOR UPDATE")
		if err != nil {
			return err
		}
		if err := change(&t); err != nil {
			return err
		}
		doc, err := json.Marshal(t)
		if err != nil {
			return fmt.Errorf("tasks: encode %s: %w", id, err)
		}
		_, err = tx.Exec(ctx, `UPDATE agentpg_tasks SET status = $1, assignee = $2, deadline = $3, priority = $4, doc = $5 WHERE id = $6`,
			string(t.Status), t.Assignee, deadlineMS(t), t.Requirements.Constraints.Priority, string(doc), id)
		if err != nil {
			return err
		}
		out = t
		return notify(ctx, tx, TopicTasks)
	})
	if err != nil {
		return tasks.Task{}, err
	}
	return out, nil
}

// List returns the tasks matching f, highest priority first, then oldest.
func (b *Tasks) List(ctx context.Context, f tasks.Filter) ([]tasks.Task, error) {
	var where []string
	var args []any
	if len(f.Status) > 0 {
		st := make([]string, len(f.Status))
		for i, s := range f.Status {
			st[i] = string(s)
		}
		args = append(args, st)
		where = append(where, fmt.Sprintf("status = ANY($%d)", len(args)))
	}
	if f.Assignee != "" {
		args = append(args, f.Assignee)
		where = append(where, fmt.Sprintf("assignee = $%d", len(args)))
	}
	q := "SELECT doc FROM agentpg_tasks"
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY priority DESC, created, id"
	if f.Limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", f.Limit)
	}
	rows, err := b.db.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("tasks: list: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (tasks.Task, error) {
		var doc string
		if err := r.Scan(&doc); err != nil {
			return tasks.Task{}, err
		}
		return decodeTask(doc)
	})
	if err != nil {
		return nil, fmt.Errorf("tasks: list: %w", err)
	}
	return out, nil
}

// Active counts assigned or running tasks per assignee.
func (b *Tasks) Active(ctx context.Context) (map[string]int, error) {
	rows, err := b.db.pool.Query(ctx, `SELECT assignee, count(*) FROM agentpg_tasks
		WHERE status IN ('assigned', 'running') AND assignee != '' GROUP BY assignee`)
	if err != nil {
		return nil, fmt.Errorf("tasks: active: %w", err)
	}
	out := map[string]int{}
	var a string
	var n int
	_, err = pgx.ForEachRow(rows, []any{&a, &n}, func() error { out[a] = n; return nil })
	if err != nil {
		return nil, fmt.Errorf("tasks: active: %w", err)
	}
	return out, nil
}

// Overdue returns the unfinished tasks whose deadline is at or before now.
func (b *Tasks) Overdue(ctx context.Context, now time.Time) ([]string, error) {
	rows, err := b.db.pool.Query(ctx, `SELECT id FROM agentpg_tasks
		WHERE status IN ('pending', 'assigned', 'running') AND deadline > 0 AND deadline <= $1`, now.UnixMilli())
	if err != nil {
		return nil, fmt.Errorf("tasks: overdue: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("tasks: overdue: %w", err)
	}
	return ids, nil
}
