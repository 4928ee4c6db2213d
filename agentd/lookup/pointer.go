package lookup

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/agentnode/agentnode/events"
	"github.com/nbd-wtf/go-nostr"
)

// ErrBadPointer: ParsePointer was given something that names no event.
var ErrBadPointer = errors.New("lookup: not an event pointer")

// maxPointerRelays bounds the relay hints one pointer contributes.
const maxPointerRelays = 3

// authorEventsLimit bounds what a pointer to an author's events of a
// regular kind (say, the versions of a definition) fetches from a relay.
const authorEventsLimit = 100

// Pointer names events to find: one event by ID; or by Kind and Author,
// the event of an address (Identifier, for kinds 30000–39999), the
// replaceable event (kinds 0, 3, 10000–19999) or the author's latest
// events of a regular kind. Relays are the places the pointer says they
// live (an nevent's, naddr's or nprofile's relays, a tag's hint).
type Pointer struct {
	ID         string
	Kind       int
	Author     string
	Identifier string
	Relays     []string
}

// ParsePointer reads nevent1, note1, naddr1, nprofile1 and npub1 (the
// author's profile, kind 0), with a "nostr:" prefix or none, and a
// 64-hex event id.
func ParsePointer(s string) (Pointer, error) {
	if r, err := events.ParseRef(s); err == nil {
		return Pointer{ID: r.ID, Kind: r.Kind, Author: r.Author, Identifier: r.Identifier, Relays: r.Relays}, nil
	}
	pk, relays, err := events.ParsePubKeyHints(s)
	if err != nil {
		return Pointer{}, fmt.Errorf("%w: %q", ErrBadPointer, clipPointer(s))
	}
	return Pointer{Kind: 0, Author: pk, Relays: relays}, nil
}

// clipPointer shortens s for an error message.
func clipPointer(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

func addressable(kind int) bool { return kind >= 30000 && kind < 40000 }
func replaceable(kind int) bool {
	return kind == 0 || kind == 3 || (kind >= 10000 && kind < 20000)
}

// Filter is the query for what p names.
func (p Pointer) Filter() nostr.Filter {
	switch {
	case p.ID != "":
		return nostr.Filter{IDs: []string{p.ID}, Limit: 1}
	case addressable(p.Kind):
		return nostr.Filter{Kinds: []int{p.Kind}, Authors: []string{p.Author}, Tags: nostr.TagMap{"d": {p.Identifier}}, Limit: 1}
	case replaceable(p.Kind):
		return nostr.Filter{Kinds: []int{p.Kind}, Authors: []string{p.Author}, Limit: 1}
	default:
		return nostr.Filter{Kinds: []int{p.Kind}, Authors: []string{p.Author}, Limit: authorEventsLimit}
	}
}

// valid: an id, or an author's kind (an address with its identifier).
func (p Pointer) valid() bool {
	if p.ID != "" {
		return nostr.IsValid32ByteHex(p.ID)
	}
	return nostr.IsValid32ByteHex(p.Author) && p.Kind >= 0 && p.Kind <= 65535
}

// single: p names one event (an id, an address, a replaceable event).
func (p Pointer) single() bool {
	return p.ID != "" || addressable(p.Kind) || replaceable(p.Kind)
}

// hintKeys are the hint memory's keys for p: its event, its address, its
// author.
func (p Pointer) hintKeys() []string {
	var out []string
	if p.ID != "" {
		out = append(out, eventHint(p.ID))
	}
	if addressable(p.Kind) && p.Author != "" {
		out = append(out, addrHint(fmt.Sprintf("%d:%s:%s", p.Kind, p.Author, p.Identifier)))
	}
	if p.Author != "" {
		out = append(out, pubkeyHint(p.Author))
	}
	return out
}

// Resolve returns what p names: the local store's answer when it has one
// and p names one event (an id, a replaceable or addressable event); else
// — and always for an author's events of a regular kind, of which the
// store may hold only some — it is looked up — on the peers, the author's NIP-65 write relays
// (when p names its author), p.Relays (at most 3) and the hints remembered
// from stored events' tags for p's event, address or author — and what was
// found is stored. ErrNotFound, ErrBusy as Find; ErrBadPointer for a
// pointer that names nothing.
func (l *Lookup) Resolve(ctx context.Context, p Pointer) ([]*nostr.Event, error) {
	if !p.valid() {
		return nil, fmt.Errorf("%w: %+v", ErrBadPointer, p)
	}
	f := p.Filter()
	local, err := l.cfg.Local.QuerySync(ctx, f)
	if err != nil {
		return nil, err
	}
	if len(local) > 0 && p.single() {
		return local, nil
	}
	hints := slices.Clone(p.Relays[:min(len(p.Relays), maxPointerRelays)])
	hints = append(hints, l.hinted(p.hintKeys()...)...)
	found, err := l.Find(ctx, f, p.Author, hints)
	if len(local) > 0 { // an author's events: what the store had, and what was found
		return append(local, found...), nil
	}
	return found, err
}
