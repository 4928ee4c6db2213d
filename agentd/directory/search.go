package directory

import (
	"cmp"
	"slices"
	"strings"
	"time"
)

// Query is agentSearch's input.
type Query struct {
	// Capabilities are all required (case-insensitive exact names).
	Capabilities []string
	// MinScore: only agents whose QualityScore is at least this (0: any).
	MinScore float64
	// MaxCost: only agents whose CostPerToken is at most this (nil: any).
	MaxCost *float64
	// Text: case-insensitive substring of the name, capabilities, models or
	// specializations, or a prefix of the hex id or npub ("": any).
	Text string
	// IncludeUnavailable lists unavailable agents too, after every available
	// one. The zero value (false) is the spec's default: available only.
	IncludeUnavailable bool
	// Limit caps the results (0: DefaultLimit; negative: no cap).
	Limit int
	// Offset skips that many of the best matches first (paging).
	Offset int
}

// Search returns the agents matching q, best first (docs/DIRECTORY.md#ranking).
func (d *Directory) Search(q Query) []Agent {
	agents, _ := d.SearchPage(q)
	return agents
}

// SearchPage returns the page of q's matches that q.Offset and q.Limit
// select, best first, and how many match in all. Only the page is copied
// out.
func (d *Directory) SearchPage(q Query) (page []Agent, total int) {
	now := d.cfg.Now()
	want := lowerAll(q.Capabilities)
	text := strings.ToLower(strings.TrimSpace(q.Text))
	d.mu.RLock()
	defer d.mu.RUnlock()
	var hits []hit
	maxCost := 0.0
	for _, e := range d.candidates(want) {
		if !e.known() || !matches(e, q, want, text) {
			continue
		}
		h := hit{e: e, available: e.available(now, d.cfg.HeartbeatTTL)}
		if !h.available && !q.IncludeUnavailable {
			continue
		}
		maxCost = max(maxCost, e.view.CostPerToken)
		hits = append(hits, h)
	}
	for i := range hits {
		hits[i].rank = d.rank(&hits[i], maxCost)
	}
	total = len(hits)
	slices.SortFunc(hits, better)
	hits = hits[min(max(q.Offset, 0), len(hits)):]
	if n := limitOf(q.Limit); n >= 0 && len(hits) > n {
		hits = hits[:n]
	}
	return snapshots(hits, now, d.cfg.HeartbeatTTL), total
}

// candidates are the entries that may match: those offering the rarest
// wanted capability, or every entry when none is wanted.
func (d *Directory) candidates(want []string) map[string]*entry {
	if len(want) == 0 {
		return d.agents
	}
	best := d.byCap[want[0]]
	for _, c := range want[1:] {
		if set := d.byCap[c]; len(set) < len(best) {
			best = set
		}
	}
	return best
}

// hit is a matching entry with its rank.
type hit struct {
	e         *entry
	available bool
	rank      float64
}

// matches applies q's filters to e (availability aside).
func matches(e *entry, q Query, want []string, text string) bool {
	v := &e.view
	if v.QualityScore < q.MinScore {
		return false
	}
	if q.MaxCost != nil && v.CostPerToken > *q.MaxCost {
		return false
	}
	for _, c := range want {
		if _, found := slices.BinarySearch(e.caps, c); !found {
			return false
		}
	}
	return text == "" || strings.Contains(e.search, text) ||
		strings.HasPrefix(e.id, text) || strings.HasPrefix(v.Npub, text)
}

// rank = Wq·score/10 + Wc·(1 − cost/maxCost) + Wl·(1 − load/capacity).
func (d *Directory) rank(h *hit, maxCost float64) float64 {
	w, v := d.cfg.Weights, &h.e.view
	costTerm := 1.0
	if maxCost > 0 {
		costTerm = 1 - v.CostPerToken/maxCost
	}
	return w.Quality*v.QualityScore/10 + w.Cost*costTerm + w.Load*(1-loadFraction(v.Status, v.Load, v.Capacity))
}

// loadFraction is load/capacity in 0..1; busy counts as full, an unknown
// capacity as idle unless the agent reports load.
func loadFraction(status string, load, capacity int) float64 {
	switch {
	case status == "busy":
		return 1
	case capacity > 0:
		return min(1, float64(load)/float64(capacity))
	case load > 0:
		return 1
	}
	return 0
}

// better orders hits: proven before unverified registrations, then
// available first, then rank, evaluation count, id.
func better(a, b hit) int {
	if (a.e.claim == nil) != (b.e.claim == nil) {
		if a.e.claim == nil {
			return -1
		}
		return 1
	}
	if a.available != b.available {
		if a.available {
			return -1
		}
		return 1
	}
	if c := cmp.Compare(b.rank, a.rank); c != 0 {
		return c
	}
	if c := cmp.Compare(b.e.view.EvaluationCount, a.e.view.EvaluationCount); c != 0 {
		return c
	}
	return strings.Compare(a.e.id, b.e.id)
}

// topN sorts hits best first and keeps n (n < 0: all).
func topN(hits []hit, n int) []hit {
	slices.SortFunc(hits, better)
	if n >= 0 && len(hits) > n {
		hits = hits[:n]
	}
	return hits
}

func limitOf(n int) int {
	if n == 0 {
		return DefaultLimit
	}
	return n
}

// snapshots copies the hits' views out.
func snapshots(hits []hit, now time.Time, ttl time.Duration) []Agent {
	out := make([]Agent, len(hits))
	for i, h := range hits {
		out[i] = h.e.snapshot(now, ttl)
	}
	return out
}

// lowerAll lower-cases and trims each value, dropping blanks.
func lowerAll(values []string) []string {
	var out []string
	for _, v := range values {
		if v = strings.ToLower(strings.TrimSpace(v)); v != "" {
			out = append(out, v)
		}
	}
	return out
}
