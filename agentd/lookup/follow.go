package lookup

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/nbd-wtf/go-nostr"
)

// followQueue bounds the stored events waiting for their references to be
// followed; beyond, Notify drops (counted).
const followQueue = 256

// kindComment is NIP-22's comment: its "E"/"A" tags name the root (here:
// a lesson) with a relay hint.
const kindComment = 1111

// Follower looks up the roots of stored comments that the node lacks (a
// lesson commented on elsewhere): the NIP-22 "E" and "A" tags, with their
// relay hints and the root author's write relays. One worker, a queue of
// followQueue events (Notify never blocks: a full queue drops), every
// lookup within the Lookup's budgets.
type Follower struct {
	l       *Lookup
	queue   chan *nostr.Event
	dropped atomic.Int64
	found   atomic.Int64
}

// Follower returns a Follower of l; it starts nothing (Run).
func (l *Lookup) Follower() *Follower {
	return &Follower{l: l, queue: make(chan *nostr.Event, followQueue)}
}

// Notify queues a stored comment whose root may be missing; other kinds
// are ignored. Never blocks (relay.OnStored).
func (f *Follower) Notify(evt *nostr.Event) {
	if evt.Kind != kindComment {
		return
	}
	select {
	case f.queue <- evt:
	default:
		f.dropped.Add(1)
	}
}

// Dropped is how many comments Notify dropped on a full queue; Found how
// many roots the follower stored.
func (f *Follower) Dropped() int64 { return f.dropped.Load() }
func (f *Follower) Found() int64   { return f.found.Load() }

// Run follows queued comments until ctx ends; it returns nil then.
func (f *Follower) Run(ctx context.Context) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case evt := <-f.queue:
			f.follow(ctx, evt)
		}
	}
}

// follow resolves evt's roots (a local one costs one local query).
func (f *Follower) follow(ctx context.Context, evt *nostr.Event) {
	f.l.noteHints([]*nostr.Event{evt})
	for _, p := range rootsOf(evt) {
		found, err := f.l.Resolve(ctx, p)
		if err == nil && len(found) > 0 && f.l.Source(found[0].ID) != "" {
			f.found.Add(1)
			f.l.cfg.Logger.Debug("lookup: comment root fetched", "comment", evt.ID, "root", found[0].ID, "relay", f.l.Source(found[0].ID))
		}
	}
}

// rootsOf are the pointers of a comment's root tags ("E" with its hint and
// author, "A" with its hint), at most two.
func rootsOf(evt *nostr.Event) []Pointer {
	var out []Pointer
	for _, t := range evt.Tags {
		if len(t) < 2 || len(out) == 2 {
			continue
		}
		var p Pointer
		switch t[0] {
		case "E":
			p = Pointer{ID: t[1]}
			if len(t) >= 4 && nostr.IsValid32ByteHex(t[3]) {
				p.Author = t[3]
			}
		case "A":
			var ok bool
			if p, ok = parseAddr(t[1]); !ok {
				continue
			}
		default:
			continue
		}
		if len(t) >= 3 && isRelayURL(t[2]) {
			p.Relays = []string{t[2]}
		}
		if p.valid() && !slices.ContainsFunc(out, func(q Pointer) bool { return q.ID == p.ID && q.Identifier == p.Identifier && q.Author == p.Author }) {
			out = append(out, p)
		}
	}
	return out
}

// parseAddr reads "<kind>:<pubkey>:<d>".
func parseAddr(a string) (Pointer, bool) {
	kind, rest, ok := strings.Cut(a, ":")
	if !ok {
		return Pointer{}, false
	}
	pk, d, ok := strings.Cut(rest, ":")
	k, err := strconv.Atoi(kind)
	if !ok || err != nil || !nostr.IsValid32ByteHex(pk) {
		return Pointer{}, false
	}
	return Pointer{Kind: k, Author: pk, Identifier: d}, true
}
