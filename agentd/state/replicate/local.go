package replicate

import (
	"cmp"
	"context"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/internal/relayclient"
)

// LocalRelay is the node's own relay used in-process; *relay.Relay is one.
// Its reads are trusted (no NIP-42: the node is reading its own store).
type LocalRelay interface {
	Publish(ctx context.Context, evt *nostr.Event) error
	QuerySync(ctx context.Context, filter nostr.Filter) ([]*nostr.Event, error)
}

// Defaults for Local.
const (
	DefaultLocalPoll   = 250 * time.Millisecond // how often Subscribe looks for new events
	DefaultLocalWindow = DefaultResumeSlack     // how far back each poll looks (clock skew)
)

// Local adapts the in-process relay to Publisher and Subscriber. Publish
// goes through the relay's checks and broadcasts to its websocket clients.
// Subscribe polls QuerySync for events it has not seen: at once when the
// relay announces a matching stored event (if it can: OnStored), else
// every Poll.
type Local struct {
	Relay  LocalRelay
	Poll   time.Duration // 0 = DefaultLocalPoll
	Window time.Duration // 0 = DefaultLocalWindow
}

var (
	_ Publisher  = (*Local)(nil)
	_ Subscriber = (*Local)(nil)
)

// Link returns a Link named name that pushes to and pulls from l.
func (l *Local) Link(name string) Link { return Link{Name: name, Publisher: l, Subscriber: l} }

// Publish stores and broadcasts evt.
func (l *Local) Publish(ctx context.Context, evt *nostr.Event) error {
	return l.Relay.Publish(ctx, evt)
}

// Query returns the stored events matching filter.
func (l *Local) Query(ctx context.Context, filter nostr.Filter) ([]*nostr.Event, error) {
	return l.Relay.QuerySync(ctx, filter)
}

// storedNotifier is implemented by a relay that can tell in-process
// listeners about each stored event (relay.Relay.OnStored). fn must not
// block.
type storedNotifier interface {
	OnStored(fn func(*nostr.Event)) (remove func())
}

// Subscribe polls for events matching filters and hands each to fn once,
// until ctx ends; eose is called after the first poll. If the relay
// announces stored events (OnStored), a matching one triggers a poll at
// once instead of at the next tick.
func (l *Local) Subscribe(ctx context.Context, filters nostr.Filters, fn func(*nostr.Event), eose func()) error {
	poll := cmp.Or(l.Poll, DefaultLocalPoll)
	window := nostr.Timestamp(cmp.Or(l.Window, DefaultLocalWindow) / time.Second)
	t := time.NewTicker(poll)
	defer t.Stop()
	wake := make(chan struct{}, 1)
	if n, ok := l.Relay.(storedNotifier); ok {
		remove := n.OnStored(func(evt *nostr.Event) {
			if filters.Match(evt) {
				select {
				case wake <- struct{}{}:
				default:
				}
			}
		})
		defer remove()
	}
	watch := make([]watcher, len(filters))
	for i, f := range filters {
		watch[i] = watcher{filter: f, window: window, seen: map[string]nostr.Timestamp{}}
	}
	for {
		for i := range watch {
			if err := watch[i].poll(ctx, l.Relay, fn); err != nil {
				return err
			}
		}
		if eose != nil {
			eose()
			eose = nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		case <-wake:
		}
	}
}

// watcher follows one filter. Each poll asks for events from the newest
// created_at seen less the window (events stored late with older
// timestamps, from other publishers' clocks) and delivers those not seen;
// seen forgets ids older than the window.
type watcher struct {
	filter nostr.Filter
	window nostr.Timestamp
	newest nostr.Timestamp
	seen   map[string]nostr.Timestamp
}

func (w *watcher) poll(ctx context.Context, r LocalRelay, fn func(*nostr.Event)) error {
	f := w.filter
	if from := w.newest - w.window; w.newest > w.window && (f.Since == nil || *f.Since < from) {
		f.Since = &from
	}
	evts, err := queryAll(ctx, r, f)
	if err != nil {
		return err
	}
	for i := len(evts) - 1; i >= 0; i-- {
		evt := evts[i]
		if _, ok := w.seen[evt.ID]; ok {
			continue
		}
		w.seen[evt.ID] = evt.CreatedAt
		w.newest = max(w.newest, evt.CreatedAt)
		fn(evt)
	}
	for id, at := range w.seen {
		if at+w.window < w.newest {
			delete(w.seen, id)
		}
	}
	return nil
}

// queryAll returns every stored event matching f, newest first, in pages
// of f's limit (relayclient.Walk; the in-process relay answers a page in
// full).
func queryAll(ctx context.Context, r LocalRelay, f nostr.Filter) ([]*nostr.Event, error) {
	page := cmp.Or(max(f.Limit, 0), relayclient.DefaultPage)
	evts, _, err := relayclient.All(ctx, r, f, relayclient.Paging{Page: page, Honours: page})
	return evts, err
}
