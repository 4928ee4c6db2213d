package registry

import (
	"context"
	"fmt"

	"github.com/agentnode/agentnode/events"
	"github.com/nbd-wtf/go-nostr"
)

// relayWindow is how many NIP-50 hits are read per wanted result: hits on
// older versions and filtered-out packages are dropped after the query.
const relayWindow = 4

// searchRelay ranks with the source's NIP-50 search; a hit on any version
// of an (author, name) stands for its latest version.
func (r *Registry) searchRelay(ctx context.Context, query string, f Filters) ([]Entry, error) {
	filter := nostr.Filter{Kinds: []int{events.KindCapability}, Search: query, Limit: min(f.limit()*relayWindow, MaxLimit)}
	if f.Author != "" {
		filter.Authors = []string{f.Author}
	}
	evts, err := r.src.QuerySync(ctx, filter)
	if err != nil {
		return nil, fmt.Errorf("registry: search: %w", err)
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	seen := map[string]bool{}
	out := []Entry{}
	for _, evt := range evts {
		e := r.idx.byID[evt.ID]
		if e == nil {
			continue // not a valid package
		}
		key := authorName(e.Author, e.Name)
		latest := r.idx.latest[key]
		if latest == nil || seen[key] || !f.match(latest) {
			continue
		}
		seen[key] = true
		if out = append(out, *latest); len(out) == f.limit() {
			break
		}
	}
	return out, nil
}
