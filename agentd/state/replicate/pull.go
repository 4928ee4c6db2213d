package replicate

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd/state/schema"
	"github.com/agentnode/agentnode/agentd/state/store"
	"github.com/agentnode/agentnode/internal/backoff"
	"github.com/agentnode/agentnode/internal/relayclient"
)

// errSelf marks an event this replica published itself.
var errSelf = errors.New("replicate: own op event")

// puller pulls from one link until ctx ends: a catch-up from the
// persisted cursor, then a live subscription; when that ends (connection
// lost), it starts over after a back-off (backoff.Loop; a pull that ran
// longer than RetryMax counts as healthy: its failure is a fresh one).
func (r *Replicator) puller(ctx context.Context, l Link) {
	r.retry().Loop(ctx, func(ctx context.Context) (bool, error) {
		began := time.Now()
		err := r.pullOnce(ctx, l)
		return time.Since(began) > r.cfg.RetryMax, err
	}, func(rt backoff.Retry) {
		r.log.Warn("replicate: pull ended; resuming", "link", l.Name, "in", rt.Wait, "err", rt.Err)
	})
}

// pullOnce follows one link until the subscription or ctx ends. It opens
// the live subscription first (from the cursor less the resume slack, for
// clock skew) and, once the relay has registered it (EOSE), catches up on
// every stored event since the cursor, page by page, beside it: an event
// stored while the subscription was being set up is in one or the other
// (khatru queries a REQ's stored events before it registers the listener).
// The cursor moves to the pull's start once the catch-up is complete, then
// with each live event.
func (r *Replicator) pullOnce(ctx context.Context, l Link) error {
	key := r.cursorKey("pull", l.Name)
	cursor, err := r.loadInt(ctx, key)
	if err != nil {
		return err
	}
	filters, err := r.filters(ctx)
	if err != nil {
		return err
	}
	start, since := nostr.Now(), r.resumeFrom(nostr.Timestamp(cursor))
	ctx, cancel := context.WithCancelCause(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel(nil)

	var caughtUp atomic.Bool
	catchUp := func() {
		for _, f := range filters {
			if err := r.catchUp(ctx, l, f, since); err != nil {
				cancel(err)
				return
			}
		}
		if err := r.saveCursor(ctx, key, start); err != nil {
			cancel(err)
			return
		}
		caughtUp.Store(true)
	}
	saved := start
	live := func(evt *nostr.Event) {
		if err := r.handle(ctx, evt); err != nil {
			cancel(err)
		} else if caughtUp.Load() && evt.CreatedAt > saved {
			saved = evt.CreatedAt
			if err := r.saveCursor(ctx, key, saved); err != nil {
				cancel(err)
			}
		}
	}
	err = l.Subscriber.Subscribe(ctx, r.liveFilters(filters, since), live, func() { wg.Go(catchUp) })
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		return cause
	}
	return err
}

func (r *Replicator) saveCursor(ctx context.Context, key string, at nostr.Timestamp) error {
	return r.st.SaveSetting(ctx, key, strconv.FormatInt(int64(at), 10))
}

// liveFilters are filters with since set and a page of stored events.
func (r *Replicator) liveFilters(filters nostr.Filters, since nostr.Timestamp) nostr.Filters {
	out := make(nostr.Filters, len(filters))
	for i, f := range filters {
		out[i] = f
		out[i].Limit = r.cfg.PageSize
		if since > 0 {
			out[i].Since = &since
		}
	}
	return out
}

// resumeFrom is where a pull with this cursor starts (0: everything).
func (r *Replicator) resumeFrom(cursor nostr.Timestamp) nostr.Timestamp {
	slack := nostr.Timestamp(r.cfg.ResumeSlack / time.Second)
	if cursor <= slack {
		return 0
	}
	return cursor - slack
}

// filters are what this replicator reads: op events addressed to its key,
// and public op events of its owner's agents, itself and Follow.
func (r *Replicator) filters(ctx context.Context) (nostr.Filters, error) {
	agents, err := r.cfg.Directory.Agents(ctx, r.cfg.Owner)
	if err != nil {
		return nil, err
	}
	authors := append([]string{r.keys.pk, r.cfg.Owner}, agents...)
	authors = append(authors, r.cfg.Follow...)
	slices.Sort(authors)
	return nostr.Filters{
		{Kinds: []int{Kind}, Tags: nostr.TagMap{"p": {r.keys.pk}}},
		{Kinds: []int{Kind}, Authors: slices.Compact(authors), Tags: nostr.TagMap{"v": {schema.Public}}},
	}, nil
}

// catchUp reads f's stored events from since on, newest page first, each
// page oldest event first (relayclient.Walk: a second holding more than a
// page is read through, up to ten pages of it; the rest of a larger one is
// left with a warning and the older seconds follow).
func (r *Replicator) catchUp(ctx context.Context, l Link, f nostr.Filter, since nostr.Timestamp) error {
	if since > 0 {
		f.Since = &since
	}
	_, err := relayclient.Walk(ctx, relayclient.QueryFunc(l.Subscriber.Query), f, relayclient.Paging{Page: r.cfg.PageSize,
		OnSkip: func(second nostr.Timestamp, read int, why string) error {
			r.log.Warn("replicate: catch-up leaves the rest of a crowded second", "link", l.Name, "second", second, "read", read, "why", why)
			return nil
		}}, func(page []*nostr.Event) error {
		for _, evt := range slices.Backward(page) {
			if err := r.handle(ctx, evt); err != nil {
				return err
			}
		}
		return nil
	})
	return err
}

// handle opens and applies one event. Faults of the event (malformed,
// undecryptable, untrusted, not ours) are logged and skipped; an error is
// returned only for failures that are not the event's (the store, the
// directory), so that the pull starts over and the event comes again.
func (r *Replicator) handle(ctx context.Context, evt *nostr.Event) error {
	if !r.seen.add(evt.ID) {
		return nil
	}
	n, err := r.apply(ctx, evt)
	r.stats.applied.Add(int64(n))
	switch {
	case errors.Is(err, errSelf):
		return nil
	case err == nil:
		r.stats.received.Add(1)
		return nil
	case eventFault(err):
		r.stats.received.Add(1)
		r.stats.skipped.Add(1)
		level := slog.LevelWarn
		if errors.Is(err, ErrNotForUs) {
			level = slog.LevelDebug
		}
		r.log.Log(ctx, level, "replicate: op event skipped", "id", evt.ID, "author", evt.PubKey, "err", err)
		return nil
	}
	r.seen.forget(evt.ID)
	return err
}

// apply opens evt, checks that its author may write the owner's state and
// applies its envelopes; it returns how many were new.
func (r *Replicator) apply(ctx context.Context, evt *nostr.Event) (int, error) {
	if t := evt.Tags.Find(TagReplica); t != nil && t[1] == string(r.st.Replica()) {
		return 0, errSelf
	}
	if t := evt.Tags.Find(TagASM); t != nil && t[1] == asmDigest {
		return 0, r.onDigest(ctx, evt)
	}
	sum, part, parts, chunked, err := chunkOf(evt)
	if err != nil {
		return 0, err
	}
	h, plain, err := openPlain(r.keys, evt)
	if err != nil {
		return 0, err
	}
	if !r.inScope(h.Scope) {
		return 0, nil
	}
	ok, err := mayWrite(ctx, r.cfg.Directory, evt.PubKey, h.Owner)
	if err != nil {
		return 0, err
	}
	if !ok {
		return 0, ErrUntrusted
	}
	if chunked { // one part of an op too large for one event
		if plain, err = r.chunks.add(evt.PubKey, sum, part, parts, plain, time.Now()); err != nil || plain == "" {
			return 0, err
		}
	}
	envs, err := decodeBatch(h, evt, plain)
	if err != nil {
		return 0, err
	}
	return r.st.ApplyRemote(ctx, envs)
}

// eventFault reports whether err (possibly joined) is entirely the
// received event's fault rather than a local failure.
func eventFault(err error) bool {
	if multi, ok := err.(interface{ Unwrap() []error }); ok {
		errs := multi.Unwrap()
		// fmt.Errorf("%w: ...: %w", sentinel, cause) is the sentinel's kind;
		// errors.Join(a, b, ...) is a fault only if every part is.
		return slices.ContainsFunc(errs, isFaultSentinel) || !slices.ContainsFunc(errs, func(e error) bool { return !eventFault(e) })
	}
	return slices.ContainsFunc(faultSentinels, func(target error) bool { return errors.Is(err, target) })
}

var faultSentinels = []error{ErrBadEvent, ErrUndecryptable, ErrNotForUs, ErrUntrusted,
	store.ErrUnknownSchema, store.ErrInvalidEnvelope}

func isFaultSentinel(err error) bool { return slices.Contains(faultSentinels, err) }
