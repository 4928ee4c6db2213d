package peers

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"

	"github.com/nbd-wtf/go-nostr"
)

// keyed is a filter with its watermark key.
type keyed struct {
	key    string
	filter nostr.Filter
}

// plan is what the syncer pulls and pushes, read from Config.Interests
// and Config.Outbox.
type plan struct {
	interests []keyed
	outbox    []keyed
}

// inOutbox reports whether evt is one of the node's own events to push.
func (p *plan) inOutbox(evt *nostr.Event) bool {
	return slices.ContainsFunc(p.outbox, func(k keyed) bool { return k.filter.Matches(evt) })
}

// keyFilters keys each filter, dropping repeats.
func keyFilters(fs []nostr.Filter) []keyed {
	out := make([]keyed, 0, len(fs))
	for _, f := range fs {
		k := keyed{key: filterKey(f), filter: f}
		if !slices.ContainsFunc(out, func(o keyed) bool { return o.key == k.key }) {
			out = append(out, k)
		}
	}
	return out
}

// sameKeys reports whether a and b hold the same filters.
func sameKeys(a, b []keyed) bool {
	ka, kb := keysOf(a), keysOf(b)
	slices.Sort(ka)
	slices.Sort(kb)
	return slices.Equal(ka, kb)
}

func keysOf(ks []keyed) []string {
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = k.key
	}
	return out
}

// filterKey names what a filter selects, whatever its time window and
// limit: the first 16 hex digits of the sha256 of its canonical JSON with
// since, until and limit removed and every list sorted. A new filter (an
// agent installed, a sibling found) gets a new key, hence no watermark,
// hence its whole history.
func filterKey(f nostr.Filter) string {
	c := f.Clone()
	slices.Sort(c.IDs)
	slices.Sort(c.Kinds)
	slices.Sort(c.Authors)
	for _, vs := range c.Tags {
		slices.Sort(vs)
	}
	data, _ := json.Marshal(struct { // encoding/json writes map keys sorted
		IDs     []string            `json:"ids,omitempty"`
		Kinds   []int               `json:"kinds,omitempty"`
		Authors []string            `json:"authors,omitempty"`
		Tags    map[string][]string `json:"tags,omitempty"`
		Search  string              `json:"search,omitempty"`
	}{c.IDs, c.Kinds, c.Authors, c.Tags, c.Search})
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:8])
}

// withWindow returns f asking for events from since (0: from the start)
// up to until (0: no bound), at most limit of them.
func withWindow(f nostr.Filter, since, until nostr.Timestamp, limit int) nostr.Filter {
	c := f.Clone()
	c.Since, c.Until, c.LimitZero = nil, nil, false
	if since > 0 {
		c.Since = &since
	}
	if until > 0 {
		c.Until = &until
	}
	c.Limit = limit
	return c
}

// liveOnly returns f asking for no stored events and no time bound: every
// matching event the peer receives from now on, whatever its created_at.
func liveOnly(f nostr.Filter) nostr.Filter {
	c := withWindow(f, 0, 0, 0)
	c.LimitZero = true
	return c
}
