package replicate

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd/state/schema"
	"github.com/agentnode/agentnode/agentd/state/store"
)

// pusher publishes local ops to one link: after every commit (the store's
// Changed signal), every PollInterval in any case, with back-off after a
// failure. Each namespace has a persisted watermark (the last local log
// sequence the link accepted), so a restart or a relay that was down
// resumes where it stopped.
func (r *Replicator) pusher(ctx context.Context, l Link) {
	failed := 0 // pushes failed in a row
	for ctx.Err() == nil {
		changed := r.st.Changed()
		err := r.pushAll(ctx, l)
		delay := r.cfg.PollInterval
		if err != nil && ctx.Err() == nil {
			delay, changed = r.retry().Delay(failed), nil
			failed++
			r.log.Warn("replicate: push failed; retrying", "link", l.Name, "in", delay, "err", err)
		} else {
			failed = 0
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
		case <-changed:
		case <-t.C:
		}
		t.Stop()
	}
}

// pushAll pushes every namespace's new ops to l.
func (r *Replicator) pushAll(ctx context.Context, l Link) error {
	prefixes, err := r.st.Namespaces(ctx)
	if err != nil {
		return err
	}
	for _, ns := range prefixes {
		if err := r.pushNamespace(ctx, l, ns); err != nil {
			return fmt.Errorf("%s: %w", ns, err)
		}
	}
	return nil
}

// pushNamespace publishes ns's ops after the link's watermark, a page at
// a time, moving the watermark after each page the relay took whole.
func (r *Replicator) pushNamespace(ctx context.Context, l Link, ns string) error {
	key := r.cursorKey("push", l.Name, ns)
	after, err := r.loadInt(ctx, key)
	if err != nil {
		return err
	}
	for {
		envs, err := r.st.OpsSince(ctx, ns, after, r.cfg.PageSize)
		if err != nil || len(envs) == 0 {
			return err
		}
		evts, err := r.seal(ctx, ns, r.selectLocal(envs))
		if err != nil {
			return err
		}
		if err := r.publish(ctx, l, evts); err != nil {
			return err
		}
		after = envs[len(envs)-1].Seq
		if err := r.st.SaveSetting(ctx, key, strconv.FormatInt(after, 10)); err != nil {
			return err
		}
		if len(envs) < r.cfg.PageSize {
			return nil
		}
	}
}

// selectLocal keeps the ops this replicator is responsible for: made on
// this replica (ops received from others are theirs to publish), of its
// owner's documents, in a replicated scope.
func (r *Replicator) selectLocal(envs []store.Envelope) []store.Envelope {
	self := r.st.Replica()
	var out []store.Envelope
	for _, e := range envs {
		if e.Op.ID.Replica == self && e.Owner == r.cfg.Owner && r.inScope(e.Scope) {
			out = append(out, e)
		}
	}
	return out
}

// groupKey is what one batch shares: the event tags plus, for private
// state, the agent (whose readers differ).
type groupKey struct {
	head  batchHead
	agent string
}

// seal groups envs into batches and builds one event per batch and reader.
func (r *Replicator) seal(ctx context.Context, ns string, envs []store.Envelope) ([]*nostr.Event, error) {
	groups, order := map[groupKey][]store.Envelope{}, []groupKey{}
	for _, e := range envs {
		sch, ok := r.cfg.Schemas.Lookup(e.Schema)
		if !ok {
			r.log.Error("replicate: local op of an unknown schema not sent", "schema", e.Schema, "op", e.OpID())
			continue
		}
		k := groupKey{head: batchHead{NS: ns, Schema: e.Schema, Scope: e.Scope, Owner: e.Owner,
			Vis: sch.Visibility, Replica: string(r.st.Replica())}}
		if sch.Visibility == schema.Private {
			k.agent = e.Agent
		}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], e)
	}
	var out []*nostr.Event
	at := nostr.Now()
	for _, k := range order {
		evts, err := r.sealGroup(ctx, k.head, groups[k], at)
		if err != nil {
			return nil, err
		}
		out = append(out, evts...)
	}
	return out, nil
}

// sealGroup builds the events of one group: per batch, one plaintext
// event (public) or one encrypted event per reader.
func (r *Replicator) sealGroup(ctx context.Context, h batchHead, envs []store.Envelope, at nostr.Timestamp) ([]*nostr.Event, error) {
	who, err := readers(ctx, r.cfg.Directory, h.Vis, envs[0])
	if err != nil {
		return nil, err
	}
	if h.Vis != schema.Public && len(who) == 0 {
		r.log.Error("replicate: no valid reader for private/shared ops; not sent", "schema", h.Schema, "owner", h.Owner)
		return nil, nil
	}
	batches, tooLarge, err := encodeBatches(envs, r.cfg.MaxBatchBytes)
	if err != nil {
		return nil, err
	}
	if len(who) == 0 {
		who = []string{""} // public: one plaintext event
	}
	out, err := chunkEvents(r.keys, r.log, h, nil, tooLarge, who, r.cfg.MaxBatchBytes, at) // ops too large for one event
	if err != nil {
		return nil, err
	}
	for _, b := range batches {
		for _, reader := range who {
			evt, err := seal(r.keys, h, b, reader, at)
			if err != nil {
				return nil, err
			}
			out = append(out, evt)
		}
	}
	return out, nil
}

// publish sends evts to l in order; a permanent refusal drops the event
// (logged), any other failure stops and is returned.
func (r *Replicator) publish(ctx context.Context, l Link, evts []*nostr.Event) error {
	for _, evt := range evts {
		err := l.Publisher.Publish(ctx, evt)
		switch {
		case err == nil:
			r.stats.published.Add(1)
		case permanent(err):
			r.stats.skipped.Add(1)
			r.log.Error("replicate: relay refused an op event; dropped", "link", l.Name, "id", evt.ID, "err", err)
		default:
			return err
		}
	}
	return nil
}

func (r *Replicator) loadInt(ctx context.Context, key string) (int64, error) {
	v, err := r.st.LoadSetting(ctx, key)
	if err != nil || v == "" {
		return 0, err
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, errors.Join(fmt.Errorf("replicate: cursor %s: %q", key, v), err)
	}
	return n, nil
}
