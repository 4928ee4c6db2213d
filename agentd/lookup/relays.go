package lookup

import (
	"context"
	"strings"

	"github.com/nbd-wtf/go-nostr"
)

// kindRelayList is NIP-65's relay list.
const kindRelayList = 10002

// relays are the relays one lookup asks, at most MaxRelays: the peers,
// then author's NIP-65 write relays, then the hints; never this node.
func (l *Lookup) relays(ctx context.Context, author string, hints []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range l.cfg.Self {
		seen[nostr.NormalizeURL(s)] = true
	}
	add := func(urls []string) {
		for _, u := range urls {
			n := nostr.NormalizeURL(u)
			if len(out) < l.cfg.MaxRelays && !seen[n] && (strings.HasPrefix(n, "ws://") || strings.HasPrefix(n, "wss://")) {
				seen[n] = true
				out = append(out, u)
			}
		}
	}
	add(l.cfg.Peers())
	add(l.writeRelays(ctx, author))
	add(hints)
	return out
}

// writeRelays reads author's NIP-65 write relays: the local kind 10002,
// else the one the peers hold (stored once found).
func (l *Lookup) writeRelays(ctx context.Context, author string) []string {
	if author == "" {
		return nil
	}
	f := nostr.Filter{Kinds: []int{kindRelayList}, Authors: []string{author}, Limit: 1}
	evts, err := l.cfg.Local.QuerySync(ctx, f)
	if err == nil && len(evts) == 0 && len(l.cfg.Peers()) > 0 {
		if _, miss := l.missing.get(f.String(), l.now()); !miss {
			hits, asked := l.ask(ctx, l.cfg.Peers()[:min(len(l.cfg.Peers()), l.cfg.MaxRelays)], f)
			if len(hits) == 0 && asked > 0 {
				l.missing.put(f.String(), "", l.now().Add(l.cfg.NegativeTTL))
			}
			evts = l.store(ctx, newest(hits))
		}
	}
	if len(evts) == 0 {
		return nil
	}
	return WriteRelays(evts[0])
}

// newest keeps the newest hit only (a replaceable event).
func newest(hits []hit) []hit {
	if len(hits) == 0 {
		return nil
	}
	best := hits[0]
	for _, h := range hits[1:] {
		if h.evt.CreatedAt > best.evt.CreatedAt {
			best = h
		}
	}
	return []hit{best}
}

// WriteRelays are the write relays of a NIP-65 relay list: "r" tags
// marked "write" or unmarked (at most 20).
func WriteRelays(list *nostr.Event) []string {
	var out []string
	for _, t := range list.Tags {
		if len(t) >= 2 && t[0] == "r" && (len(t) == 2 || t[2] == "" || t[2] == "write") && len(out) < 20 {
			out = append(out, t[1])
		}
	}
	return out
}
