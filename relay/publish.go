package relay

import (
	"context"
	"strings"

	"github.com/nbd-wtf/go-nostr"
)

// Publish stores a signed event exactly as if a client had sent it over a
// websocket (same checks, same policies, same NIP-01 prefixed refusals) and
// broadcasts it to live subscribers. A duplicate is accepted silently.
func (r *Relay) Publish(ctx context.Context, evt *nostr.Event) error {
	if !evt.CheckID() {
		return errorf("invalid", "id is computed incorrectly")
	}
	if ok, err := evt.CheckSignature(); err != nil || !ok {
		return errorf("invalid", "signature is invalid")
	}
	if evt.Kind == 5 {
		if err := r.applyDeletion(ctx, evt); err != nil {
			return err
		}
	}
	skipBroadcast, err := r.khatru.AddEvent(ctx, evt)
	if err != nil {
		return err
	}
	if !skipBroadcast {
		r.khatru.BroadcastEvent(evt)
	}
	return nil
}

// applyDeletion carries out a NIP-09 deletion request published in-process
// (khatru does this itself only for websocket clients): every target
// written by the requester is deleted; a foreign target refuses the request.
func (r *Relay) applyDeletion(ctx context.Context, del *nostr.Event) error {
	for _, tag := range del.Tags {
		targets, err := r.deletionTargets(ctx, tag, del.CreatedAt)
		if err != nil {
			return err
		}
		for _, target := range targets {
			if target.PubKey != del.PubKey {
				return errorf("blocked", "you are not the author of this event")
			}
			if err := r.store.delete(ctx, target); err != nil {
				return errorf("error", "failed to delete %s", target.ID)
			}
		}
	}
	return nil
}

func (r *Relay) deletionTargets(ctx context.Context, tag nostr.Tag, until nostr.Timestamp) ([]*nostr.Event, error) {
	if len(tag) < 2 {
		return nil, nil
	}
	switch tag[0] {
	case "e":
		return r.QuerySync(ctx, nostr.Filter{IDs: []string{tag[1]}, Limit: 1})
	case "a":
		ptr, err := nostr.EntityPointerFromTag(tag)
		if err != nil {
			return nil, nil
		}
		f := nostr.Filter{Kinds: []int{ptr.Kind}, Authors: []string{ptr.PublicKey}, Until: &until, Limit: 1}
		if nostr.IsAddressableKind(ptr.Kind) {
			f.Tags = nostr.TagMap{"d": {ptr.Identifier}}
		}
		return r.QuerySync(ctx, f)
	}
	return nil, nil
}

// QuerySync returns the stored events matching filter, newest first. A
// filter without a limit returns at most Limits.MaxLimit events.
func (r *Relay) QuerySync(ctx context.Context, filter nostr.Filter) ([]*nostr.Event, error) {
	return r.store.querySync(ctx, filter)
}

// Count returns the number of stored events matching filter, capped at
// Limits.MaxCount.
func (r *Relay) Count(ctx context.Context, filter nostr.Filter) (int64, error) {
	return r.store.count(ctx, filter)
}

// IsRefusal reports whether err is a NIP-01 refusal (as opposed to an
// internal failure) and returns its machine-readable prefix.
func IsRefusal(err error) (prefix string, ok bool) {
	if err == nil {
		return "", false
	}
	p, _, found := strings.Cut(err.Error(), ": ")
	switch p {
	case "invalid", "blocked", "rate-limited", "pow", "duplicate", "restricted", "auth-required":
		return p, found
	}
	return "", false
}
