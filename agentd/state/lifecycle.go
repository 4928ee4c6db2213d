package state

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sort"
	"time"

	"github.com/agentnode/agentnode/agentd/state/crdt"
	"github.com/agentnode/agentnode/agentd/state/schema"
	"github.com/agentnode/agentnode/agentd/state/store"
)

// Lifecycle defaults.
const (
	DefaultRetentionKeep  = 100
	DefaultSnapshotMinOps = 64
)

// LifecycleOptions configure a Lifecycle.
type LifecycleOptions struct {
	Now func() time.Time // the clock expiry is judged by; nil = time.Now
	// RetentionKeep is how many items beyond an x-retention window survive,
	// chosen by the strategy (evict_low_importance keeps the most important,
	// drop_oldest the newest). Negative means none; 0 = DefaultRetentionKeep.
	RetentionKeep int
	// SnapshotMinOps is how many uncompacted ops a document with
	// x-compression needs before it is folded into a compressed snapshot.
	// 0 = DefaultSnapshotMinOps.
	SnapshotMinOps int
	Logger         *slog.Logger // nil = the runtime's
}

// LifecycleReport counts what one pass did.
type LifecycleReport struct {
	ExpiredOps   int `json:"expired_ops"`   // log entries dropped by x-ttl or retention
	PurgedDocs   int `json:"purged_docs"`   // documents hard-deleted by x-ttl
	EvictedItems int `json:"evicted_items"` // map items removed by retention
	Snapshots    int `json:"snapshots"`     // compressed snapshots written
}

// Lifecycle ages state per the schemas' x-ttl, x-retention and
// x-compression. RunOnce does one pass; Run repeats it until its context
// ends. Decisions use the injectable clock, so tests run it with a fake one.
type Lifecycle struct {
	rt   *Runtime
	opts LifecycleOptions
}

// NewLifecycle returns the lifecycle task of rt. It starts nothing.
func NewLifecycle(rt *Runtime, opts LifecycleOptions) *Lifecycle {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.RetentionKeep == 0 {
		opts.RetentionKeep = DefaultRetentionKeep
	}
	opts.RetentionKeep = max(opts.RetentionKeep, 0)
	if opts.SnapshotMinOps <= 0 {
		opts.SnapshotMinOps = DefaultSnapshotMinOps
	}
	if opts.Logger == nil {
		opts.Logger = rt.opts.Logger
	}
	return &Lifecycle{rt: rt, opts: opts}
}

// Run runs a pass now and then every interval until ctx ends; it returns
// nil then. Errors of a pass are logged, not fatal. The caller owns the
// goroutine it runs in.
func (l *Lifecycle) Run(ctx context.Context, interval time.Duration) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if rep, err := l.RunOnce(ctx); err != nil && ctx.Err() == nil {
			l.opts.Logger.Warn("state lifecycle pass failed", "err", err)
		} else if rep != (LifecycleReport{}) {
			l.opts.Logger.Info("state lifecycle", "expired_ops", rep.ExpiredOps, "purged_docs", rep.PurgedDocs,
				"evicted_items", rep.EvictedItems, "snapshots", rep.Snapshots)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// RunOnce makes one pass over every schema with lifecycle annotations and
// records it in the store (Runtime.LifecycleStatus).
func (l *Lifecycle) RunOnce(ctx context.Context) (LifecycleReport, error) {
	var rep LifecycleReport
	var errs []error
	for _, s := range l.rt.reg.All() {
		if s.TTL == nil && s.Retention == nil && s.Compression == "" {
			continue
		}
		docs, err := l.rt.st.List(ctx, s)
		if err != nil {
			return rep, err
		}
		for _, d := range docs {
			if ctx.Err() != nil {
				return rep, ctx.Err()
			}
			if err := l.doc(ctx, s, d, &rep); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if err := l.rt.recordPass(ctx, rep, l.opts.Now()); err != nil {
		errs = append(errs, err)
	}
	return rep, errors.Join(errs...)
}

// doc applies TTL, retention and compression to one document.
func (l *Lifecycle) doc(ctx context.Context, s *schema.Schema, d store.DocInfo, rep *LifecycleReport) error {
	if s.TTL != nil {
		purged, err := l.ttl(ctx, s, d, rep)
		if err != nil || purged {
			return err
		}
	}
	if s.Retention != nil {
		if err := l.retain(ctx, s, d.ID, rep); err != nil {
			return err
		}
	}
	if s.Compression != "" {
		return l.compress(ctx, s, d.ID, rep)
	}
	return nil
}

// ttl drops log entries older than the TTL; any other document whose
// last change is older than the TTL is hard-deleted.
func (l *Lifecycle) ttl(ctx context.Context, s *schema.Schema, d store.DocInfo, rep *LifecycleReport) (bool, error) {
	cutoff := s.TTL.Before(l.opts.Now()).UnixMilli()
	if s.Container == crdt.ContainerLog {
		n, err := l.rt.st.Expire(ctx, s, d.ID, func(e store.Envelope) bool {
			return isEntryOp(e, s.Collection) && e.Op.TS.Wall < cutoff
		})
		rep.ExpiredOps += n
		return false, err
	}
	if d.UpdatedAt >= cutoff || s.Namespace.Kind == schema.KindCore {
		return false, nil
	}
	err := l.rt.st.Purge(ctx, s, d.ID, func(store.Meta, bool) error { return nil })
	if err == nil {
		rep.PurgedDocs++
	}
	return err == nil, err
}

// isEntryOp reports an op that adds an entry to the collection field.
func isEntryOp(e store.Envelope, field string) bool {
	return e.Action == store.ActionOp && e.Op.Kind == crdt.OpPut && e.Op.Key == field
}

func (l *Lifecycle) compress(ctx context.Context, s *schema.Schema, id string, rep *LifecycleReport) error {
	n, err := l.rt.st.LiveOps(ctx, s, id)
	if err != nil || n < l.opts.SnapshotMinOps {
		return err
	}
	if _, err := l.rt.st.Snapshot(ctx, s, id); err != nil {
		return err
	}
	rep.Snapshots++
	return nil
}

// candidate is an item beyond the retention window.
type candidate struct {
	key        string // map key, or log op id
	at         int64  // unix ms
	importance float64
}

// keepRank orders candidates best-first per the strategy; the first
// RetentionKeep survive.
func (l *Lifecycle) evictable(strategy string, cs []candidate) []candidate {
	sort.Slice(cs, func(i, j int) bool {
		a, b := cs[i], cs[j]
		if strategy == schema.EvictLowImportance && a.importance != b.importance {
			return a.importance > b.importance
		}
		if a.at != b.at {
			return a.at > b.at
		}
		return a.key < b.key
	})
	if len(cs) <= l.opts.RetentionKeep {
		return nil
	}
	return cs[l.opts.RetentionKeep:]
}

// importanceOf reads a numeric "importance" field (0 if absent).
func importanceOf(v any) float64 {
	m, _ := v.(map[string]any)
	n, _ := m["importance"].(json.Number)
	f, _ := n.Float64()
	return f
}
