package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/nbd-wtf/go-nostr"
)

const eventCols = `id, pubkey, created_at, kind, tags, content, sig`

// rowOverhead is an event's memory besides its content and tags (ids,
// signature, the structs), for QueryWithin's sizes.
const rowOverhead = 512

// Query returns the stored events matching f, newest first (created_at
// descending, then id ascending), at most f.Limit (capped by MaxLimit) of
// them. Expired events (NIP-40) are not returned; f.Search is matched with
// PostgreSQL full-text search over the content and descriptive tags.
func (s *Store) Query(ctx context.Context, f nostr.Filter) ([]*nostr.Event, error) {
	return s.QueryWithin(ctx, f, nil)
}

// QueryWithin is Query that hands take the size in bytes of each row as
// it is read (nil: no bound): take returns ErrEnough to end the answer
// there (the newest events read so far), any other error to fail it. The
// rows are read one by one from the database, so a bounded take bounds
// the memory of a query whatever its limit and the size of its events.
func (s *Store) QueryWithin(ctx context.Context, f nostr.Filter, take func(size int) error) ([]*nostr.Event, error) {
	return s.QueryAfter(ctx, f, nil, take)
}

// After is where a continued query starts, in Query's order: the events
// older than CreatedAt, or of that second with an id above ID (the last
// event of the previous part of the answer).
type After struct {
	CreatedAt nostr.Timestamp
	ID        string
}

// QueryAfter is QueryWithin that answers only the events after after
// (nil: from the newest), so that an answer cut by take can be read on.
func (s *Store) QueryAfter(ctx context.Context, f nostr.Filter, after *After, take func(size int) error) ([]*nostr.Event, error) {
	if f.LimitZero {
		return nil, nil
	}
	sql, args := selectSQL(f, nostr.Now(), s.limit(f), eventCols, after)
	rows, err := s.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("pgstore: query: %w", err)
	}
	evts, err := scanEventsWithin(rows, nil, take)
	if err != nil {
		return nil, fmt.Errorf("pgstore: query: %w", err)
	}
	// The SQL is exact; filter.Matches stays as a safety net (the lesson
	// of eventstore's other backends).
	out := evts[:0]
	for _, evt := range evts {
		if f.Matches(evt) {
			out = append(out, evt)
		}
	}
	return out, nil
}

// Count returns how many stored events match f, ignoring f.Limit, without
// reading them.
func (s *Store) Count(ctx context.Context, f nostr.Filter) (int64, error) {
	where, args := whereClause(f, nostr.Now())
	var n int64
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM pgstore_events WHERE `+where, args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("pgstore: count: %w", err)
	}
	return n, nil
}

// selectSQL is the query for f. A filter with a tag of exactly one value
// is driven by that value's rows of pgstore_tags, walked newest first
// (index pgstore_tags_order), so the database stops at the limit; any
// other filter is answered from pgstore_events' own indexes.
func selectSQL(f nostr.Filter, now nostr.Timestamp, limit int, cols string, after *After) (string, []any) {
	where, args := whereClause(f, now)
	tv := drivingTag(f)
	if tv == "" {
		where, args = afterClause(where, args, after, "created_at", "id")
		args = append(args, limit)
		return `SELECT ` + cols + ` FROM pgstore_events WHERE ` + where +
			` ORDER BY created_at DESC, id ASC LIMIT $` + strconv.Itoa(len(args)), args
	}
	n := len(args)
	conds := []string{`t.tv = $` + strconv.Itoa(n+1)}
	args = append(args, tv)
	if f.Since != nil {
		args = append(args, int64(*f.Since))
		conds = append(conds, `t.tag_created >= $`+strconv.Itoa(len(args)))
	}
	if f.Until != nil {
		args = append(args, int64(*f.Until))
		conds = append(conds, `t.tag_created <= $`+strconv.Itoa(len(args)))
	}
	if after != nil {
		var cond string
		cond, args = afterClause("TRUE", args, after, "t.tag_created", "t.tag_id")
		conds = append(conds, cond)
	}
	args = append(args, limit)
	return `SELECT ` + cols + ` FROM pgstore_tags t JOIN pgstore_events ON id = t.tag_id WHERE ` +
		strings.Join(conds, " AND ") + ` AND ` + where +
		` ORDER BY t.tag_created DESC, t.tag_id ASC LIMIT $` + strconv.Itoa(len(args)), args
}

// afterClause adds to where the condition of after (none when nil) on
// the columns of created_at and id: at or before its second, and past
// its id within it.
func afterClause(where string, args []any, after *After, created, id string) (string, []any) {
	if after == nil {
		return where, args
	}
	args = append(args, int64(after.CreatedAt), after.ID)
	ts, ix := "$"+strconv.Itoa(len(args)-1), "$"+strconv.Itoa(len(args))
	return where + ` AND ` + created + ` <= ` + ts + ` AND (` + created + ` < ` + ts + ` OR ` + id + ` > ` + ix + `)`, args
}

// drivingTag is the "key\x1fvalue" of a tag of f that has exactly one
// value short enough for pgstore_tags (the first such key in sorted
// order), or "".
func drivingTag(f nostr.Filter) string {
	keys := make([]string, 0, len(f.Tags))
	for k, vs := range f.Tags {
		if len(vs) == 1 && len(k)+len(tagSep)+len(vs[0]) <= maxIndexedTag {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return ""
	}
	slices.Sort(keys)
	return keys[0] + tagSep + f.Tags[keys[0]][0]
}

func (s *Store) limit(f nostr.Filter) int {
	max := s.MaxLimit
	if max <= 0 {
		max = DefaultMaxLimit
	}
	if f.Limit <= 0 || f.Limit > max {
		return max
	}
	return f.Limit
}

// whereClause translates f into SQL conditions and their arguments. A nil
// list means "any"; an empty non-nil list matches nothing, as in
// filter.Matches.
func whereClause(f nostr.Filter, now nostr.Timestamp) (string, []any) {
	var conds []string
	var args []any
	add := func(cond string, arg any) {
		args = append(args, arg)
		conds = append(conds, strings.ReplaceAll(cond, "$?", "$"+strconv.Itoa(len(args))))
	}
	add(`(expires_at IS NULL OR expires_at > $?)`, int64(now))
	if f.IDs != nil {
		add(`id = ANY($?::text[])`, f.IDs)
	}
	if f.Authors != nil {
		add(`pubkey = ANY($?::text[])`, f.Authors)
	}
	if f.Kinds != nil {
		kinds := make([]int32, len(f.Kinds))
		for i, k := range f.Kinds {
			kinds[i] = int32(k)
		}
		add(`kind = ANY($?::int4[])`, kinds)
	}
	for key, values := range f.Tags {
		if values == nil {
			continue
		}
		tv := make([]string, len(values))
		for i, v := range values {
			tv[i] = key + tagSep + v
		}
		add(`tagvalues && $?::text[]`, tv)
	}
	if f.Since != nil {
		add(`created_at >= $?`, int64(*f.Since))
	}
	if f.Until != nil {
		add(`created_at <= $?`, int64(*f.Until))
	}
	if f.Search != "" {
		add(`search @@ websearch_to_tsquery('simple', $?)`, f.Search)
	}
	return strings.Join(conds, " AND "), args
}

// Pubkeys returns the pubkeys of the newest events matching f, at most
// limit of them, without reading the events (a NIP-45 HyperLogLog).
func (s *Store) Pubkeys(ctx context.Context, f nostr.Filter, limit int) ([]string, error) {
	sql, args := selectSQL(f, nostr.Now(), limit, `pubkey`, nil)
	rows, err := s.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("pgstore: pubkeys: %w", err)
	}
	keys, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("pgstore: pubkeys: %w", err)
	}
	return keys, nil
}

// scanEvents reads rows of eventCols, preceded by seq when seqs is not nil.
func scanEvents(rows pgx.Rows, seqs *[]int64) ([]*nostr.Event, error) {
	return scanEventsWithin(rows, seqs, nil)
}

// scanEventsWithin is scanEvents that hands take each row's size (see
// QueryWithin).
func scanEventsWithin(rows pgx.Rows, seqs *[]int64, take func(int) error) ([]*nostr.Event, error) {
	defer rows.Close()
	var evts []*nostr.Event
	for rows.Next() {
		evt := &nostr.Event{}
		var created int64
		var tags []byte
		dest := []any{&evt.ID, &evt.PubKey, &created, &evt.Kind, &tags, &evt.Content, &evt.Sig}
		var seq int64
		if seqs != nil {
			dest = append([]any{&seq}, dest...)
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		if take != nil {
			if err := take(len(evt.Content) + 2*len(tags) + rowOverhead); errors.Is(err, ErrEnough) {
				return evts, nil
			} else if err != nil {
				return nil, err
			}
		}
		if err := json.Unmarshal(tags, &evt.Tags); err != nil {
			return nil, err
		}
		evt.CreatedAt = nostr.Timestamp(created)
		evts = append(evts, evt)
		if seqs != nil {
			*seqs = append(*seqs, seq)
		}
	}
	return evts, rows.Err()
}
