package lookup

import (
	"strings"
	"time"

	"github.com/nbd-wtf/go-nostr"
)

// hintTTL is how long a relay hint read from a stored event is kept.
const hintTTL = time.Hour

// noteHints remembers the relay hints of "p" tags (["p", <pubkey>,
// <relay url>]) in evts: where an owner's claims say its agents live. The
// next lookup of those pubkeys asks there too.
func (l *Lookup) noteHints(evts []*nostr.Event) {
	for _, evt := range evts {
		for _, t := range evt.Tags {
			if len(t) >= 3 && t[0] == "p" && len(t[1]) == 64 && (strings.HasPrefix(t[2], "ws://") || strings.HasPrefix(t[2], "wss://")) {
				l.hints.put(t[1], t[2], l.now().Add(hintTTL))
			}
		}
	}
}

// hintsFor are the remembered relay hints of pubkeys.
func (l *Lookup) hintsFor(pubkeys []string) []string {
	var out []string
	for _, pk := range pubkeys {
		if url, ok := l.hints.get(pk, l.now()); ok {
			out = append(out, url)
		}
	}
	return out
}
