package state

import (
	"context"
	"errors"
	"time"

	"github.com/agentnode/agentnode/agentd/state/crdt"
	"github.com/agentnode/agentnode/agentd/state/schema"
	"github.com/agentnode/agentnode/agentd/state/store"
)

// retain applies x-retention: items older than the window are candidates;
// all but RetentionKeep of them (by strategy) are evicted. Map items are
// removed with or_map remove ops (replicated like any edit); log entries
// are expired from the log.
func (l *Lifecycle) retain(ctx context.Context, s *schema.Schema, id string, rep *LifecycleReport) error {
	if s.Container != crdt.ContainerLog && s.Container != crdt.ContainerMap {
		return nil // retention applies to logs and maps only
	}
	cutoff := s.Retention.Window.Before(l.opts.Now()).UnixMilli()
	envs, err := l.rt.st.History(ctx, s, id)
	if err != nil {
		return err
	}
	if s.Container == crdt.ContainerLog {
		return l.retainLog(ctx, s, id, envs, cutoff, rep)
	}
	return l.retainMap(ctx, s, id, envs, cutoff, rep)
}

func (l *Lifecycle) retainLog(ctx context.Context, s *schema.Schema, id string, envs []store.Envelope, cutoff int64, rep *LifecycleReport) error {
	var cs []candidate
	for _, e := range envs {
		if isEntryOp(e, s.Collection) && e.Op.TS.Wall < cutoff && e.Op.Child != nil {
			v, _ := decodeValue(e.Op.Child.Value)
			cs = append(cs, candidate{key: e.OpID(), at: e.Op.TS.Wall, importance: importanceOf(v)})
		}
	}
	drop := map[string]bool{}
	for _, c := range l.evictable(s.Retention.Strategy, cs) {
		drop[c.key] = true
	}
	if len(drop) == 0 {
		return nil
	}
	n, err := l.rt.st.Expire(ctx, s, id, func(e store.Envelope) bool { return drop[e.OpID()] })
	rep.ExpiredOps += n
	return err
}

func (l *Lifecycle) retainMap(ctx context.Context, s *schema.Schema, id string, envs []store.Envelope, cutoff int64, rep *LifecycleReport) error {
	items, err := l.mapItems(ctx, s, id)
	if err != nil || len(items) == 0 {
		return err
	}
	lastPut := lastPutTimes(envs, s.Collection)
	var cs []candidate
	for k, v := range items {
		if at := itemTime(v, lastPut[k]); at < cutoff {
			cs = append(cs, candidate{key: k, at: at, importance: importanceOf(v)})
		}
	}
	evict := l.evictable(s.Retention.Strategy, cs)
	if len(evict) == 0 {
		return nil
	}
	if err := l.removeItems(ctx, s, id, evict); err != nil {
		return err
	}
	rep.EvictedItems += len(evict)
	return nil
}

// mapItems returns the map's entries: the collection field, or the whole
// document for a map at the root.
func (l *Lifecycle) mapItems(ctx context.Context, s *schema.Schema, id string) (map[string]any, error) {
	d, err := l.rt.st.Get(ctx, s, id, store.Filter{SQL: "deleted = 0"})
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil // gone meanwhile
	}
	if err != nil {
		return nil, err
	}
	v, err := decodeValue(d.Value)
	if err != nil {
		return nil, err
	}
	m, _ := v.(map[string]any)
	if s.Collection == "" {
		return m, nil
	}
	items, _ := m[s.Collection].(map[string]any)
	return items, nil
}

// lastPutTimes maps each item key to its latest put's wall time.
func lastPutTimes(envs []store.Envelope, field string) map[string]int64 {
	out := map[string]int64{}
	for _, e := range envs {
		if e.Action != store.ActionOp || e.Op.Kind != crdt.OpPut {
			continue
		}
		key, op := e.Op.Key, e.Op.Child
		if field != "" {
			if key != field || op == nil || op.Kind != crdt.OpPut {
				continue
			}
			key = op.Key
		}
		out[key] = max(out[key], e.Op.TS.Wall)
	}
	return out
}

// itemTime is an item's createdAt (or timestamp) if it parses, else the
// time of its latest change.
func itemTime(v any, fallback int64) int64 {
	m, _ := v.(map[string]any)
	for _, f := range []string{"createdAt", "timestamp"} {
		if s, ok := m[f].(string); ok {
			if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
				return t.UnixMilli()
			}
		}
	}
	return fallback
}

// removeItems deletes map keys with or_map remove ops.
func (l *Lifecycle) removeItems(ctx context.Context, s *schema.Schema, id string, cs []candidate) error {
	_, err := l.rt.st.Write(ctx, s, id, func(t *store.Txn) error {
		for _, c := range cs {
			ops, err := removeKey(t.Root(), s.Collection, c.key)
			t.Record(ops...)
			if err != nil {
				return err
			}
		}
		return nil
	})
	return err
}

func removeKey(root *crdt.ORMap, field, key string) ([]crdt.Op, error) {
	if field == "" {
		return root.Delete(key)
	}
	return root.Update(field, crdt.TypeORMap, func(c crdt.CRDT) ([]crdt.Op, error) {
		return c.(*crdt.ORMap).Delete(key)
	})
}
