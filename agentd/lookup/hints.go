package lookup

import (
	"strings"
	"time"

	"github.com/nbd-wtf/go-nostr"
)

// hintTTL is how long a relay hint read from a stored event is kept.
const hintTTL = time.Hour

// Keys of the hint memory: what a hint says where to find.
func pubkeyHint(pk string) string { return "p:" + pk }
func eventHint(id string) string  { return "e:" + id }
func addrHint(a string) string    { return "a:" + a }

// noteHints remembers the relay hints of the reference tags in evts:
// ["p", <pubkey>, <relay>] (an owner's claims saying where its agents
// live), ["e", <id>, <relay>, …] and ["a", <kind:pubkey:d>, <relay>] and
// their NIP-22 root forms "P", "E", "A", and "q" quotes. The next lookup
// of that pubkey, event or address asks there too.
func (l *Lookup) noteHints(evts []*nostr.Event) {
	for _, evt := range evts {
		for _, t := range evt.Tags {
			if key, url, ok := tagHint(t); ok {
				l.hints.put(key, url, l.now().Add(hintTTL))
			}
		}
	}
}

// tagHint reads one tag's hint: the memory key it is for and the relay.
func tagHint(t nostr.Tag) (key, url string, ok bool) {
	if len(t) < 3 || !isRelayURL(t[2]) {
		return "", "", false
	}
	switch t[0] {
	case "p", "P":
		if len(t[1]) == 64 {
			return pubkeyHint(t[1]), t[2], true
		}
	case "e", "E", "q":
		if len(t[1]) == 64 {
			return eventHint(t[1]), t[2], true
		}
	case "a", "A":
		if strings.Count(t[1], ":") >= 2 && len(t[1]) <= 512 {
			return addrHint(t[1]), t[2], true
		}
	}
	return "", "", false
}

func isRelayURL(s string) bool {
	return (strings.HasPrefix(s, "ws://") || strings.HasPrefix(s, "wss://")) && len(s) <= 256
}

// Hint remembers that relays hold the events of pubkey (a caller's
// nprofile, say), for an hour.
func (l *Lookup) Hint(pubkey string, relays []string) {
	for _, u := range relays[:min(len(relays), 3)] {
		if isRelayURL(u) {
			l.hints.put(pubkeyHint(pubkey), u, l.now().Add(hintTTL))
		}
	}
}

// hintsFor are the remembered relay hints of pubkeys.
func (l *Lookup) hintsFor(pubkeys []string) []string {
	keys := make([]string, len(pubkeys))
	for i, pk := range pubkeys {
		keys[i] = pubkeyHint(pk)
	}
	return l.hinted(keys...)
}

// hinted are the remembered relays of memory keys.
func (l *Lookup) hinted(keys ...string) []string {
	var out []string
	for _, k := range keys {
		if url, ok := l.hints.get(k, l.now()); ok {
			out = append(out, url)
		}
	}
	return out
}
