package asmql

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
)

// Result is one page of a query.
type Result struct {
	// Rows are the projected documents, in order. "id" is always present;
	// selected fields are keyed by the field string as written and are
	// omitted when absent; with no select, a row is the whole document.
	// JSON numbers are json.Number, so large integers stay exact.
	Rows []map[string]any
	// NextCursor continues after the last row; "" when there are no more.
	NextCursor string
}

// errDeadline is the cause given to Exec's own timeout.
var errDeadline = fmt.Errorf("asmql: Limits.Timeout: %w", context.DeadlineExceeded)

// Querier runs one SQL query: a *sql.DB, a *sql.Conn or a *sql.Tx.
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

var _ Querier = (*sql.DB)(nil)

// Exec compiles q for t, runs it under lim.Timeout (and ctx), and returns
// one page. Query errors are *Error: INVALID_QUERY, QUERY_TOO_COMPLEX,
// BAD_CURSOR, and QUERY_TIMEOUT when the timeout or ctx's deadline passes
// (SQLite is interrupted). Cancellation of ctx returns ctx's error; other
// errors come from the database and are not for peers.
func Exec(ctx context.Context, db Querier, q *Query, t Target, lim Limits) (*Result, error) {
	lim = lim.withDefaults()
	p, err := compile(q, t, lim)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeoutCause(ctx, lim.Timeout, errDeadline)
	defer cancel()
	res, err := p.run(ctx, db)
	if err != nil {
		return nil, execError(ctx, err)
	}
	return res, nil
}

// run executes the plan and reads the page.
func (p *plan) run(ctx context.Context, db Querier) (*Result, error) {
	rows, err := db.QueryContext(ctx, p.sql, p.args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	res := &Result{Rows: []map[string]any{}}
	var last []any
	for rows.Next() {
		if len(res.Rows) == p.pageSize {
			if res.NextCursor, err = encodeCursor(p.hash, last); err != nil {
				return nil, err
			}
			break
		}
		row, keys, err := p.scan(rows)
		if err != nil {
			return nil, err
		}
		res.Rows, last = append(res.Rows, row), keys
	}
	return res, rows.Err()
}

// scan reads one row: id, projections, sort keys.
func (p *plan) scan(rows *sql.Rows) (map[string]any, []any, error) {
	nproj := max(len(p.sel), 1)
	vals := make([]any, 1+nproj+len(p.keys))
	dest := make([]any, len(vals))
	for i := range vals {
		dest[i] = &vals[i]
	}
	if err := rows.Scan(dest...); err != nil {
		return nil, nil, err
	}
	row, err := p.project(vals[1 : 1+nproj])
	if err != nil {
		return nil, nil, err
	}
	row["id"] = vals[0]
	return row, vals[1+nproj:], nil
}

// project turns projected columns into a row map.
func (p *plan) project(cols []any) (map[string]any, error) {
	if p.sel == nil {
		row := map[string]any{}
		return row, decodeJSON(cols[0], &row)
	}
	row := make(map[string]any, len(p.sel)+1)
	for i, s := range p.sel {
		switch {
		case cols[i] == nil:
			// absent: omitted
		case s.f.kind != colNone:
			row[s.name] = cols[i]
		default:
			var v any
			if err := decodeJSON(cols[i], &v); err != nil {
				return nil, err
			}
			row[s.name] = v
		}
	}
	return row, nil
}

// decodeJSON decodes a TEXT column holding JSON, numbers as json.Number.
func decodeJSON(col any, v any) error {
	var b []byte
	switch x := col.(type) {
	case string:
		b = []byte(x)
	case []byte:
		b = x
	default:
		return fmt.Errorf("asmql: document column is %T, not JSON text", col)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("asmql: stored document: %w", err)
	}
	return nil
}

// execError maps a database error seen under ctx to a coded error when the
// context ended: a deadline (ours or the caller's) is QUERY_TIMEOUT.
func execError(ctx context.Context, err error) error {
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return &Error{Code: CodeTimeout, Msg: "query exceeded its time limit", err: context.Cause(ctx)}
	case ctx.Err() != nil:
		return fmt.Errorf("asmql: %w", context.Cause(ctx))
	}
	return fmt.Errorf("asmql: exec: %w", err)
}
