package peers

import (
	"context"

	"github.com/nbd-wtf/go-nostr"
)

// HasIDs is an optional method of a LocalStore: HasID reports whether an
// event with this id is stored. A LocalStore without it is asked with
// QuerySync (one id, limit 1).
type HasIDs interface {
	HasID(ctx context.Context, id string) (bool, error)
}

// known reports whether evt, whose id the caller has checked against its
// contents, is already stored locally: in the recently-seen set, else by
// the store's has-id lookup. An id is the hash of the event's body, so a
// stored id means this very event was stored, its signature verified when
// it was. A failed lookup answers false: the event is then verified and
// published like a new one.
func (s *Syncer) known(ctx context.Context, evt *nostr.Event) bool {
	if s.seen.has(evt.ID) {
		return true
	}
	found, err := s.hasID(ctx, evt.ID)
	if err != nil || !found {
		return false
	}
	s.seen.add(evt.ID)
	return true
}

func (s *Syncer) hasID(ctx context.Context, id string) (bool, error) {
	if h, ok := s.cfg.Local.(HasIDs); ok {
		return h.HasID(ctx, id)
	}
	got, err := s.cfg.Local.QuerySync(ctx, nostr.Filter{IDs: []string{id}, Limit: 1})
	return len(got) > 0, err
}
