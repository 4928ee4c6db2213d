package web

import (
	"html/template"
	"regexp"

	"github.com/nbd-wtf/go-nostr/nip19"
)

// Sharing: every agent, definition, lesson and package shows its NIP-19
// code (npub, nevent, naddr) with a "nostr:" link that opens it in the
// visitor's Nostr client (no script needed) and a copy button
// (static/copy.js, the only script the pages load).

// bech32RE is a NIP-19 code as this package writes it: a known prefix,
// "1" and the bech32 alphabet only.
var bech32RE = regexp.MustCompile(`^(npub|nevent|naddr|note|nprofile)1[02-9ac-hj-np-z]{6,}$`)

// nostrURI is the NIP-21 "nostr:" URI of a NIP-19 code. html/template
// allows only http, https and mailto links, so the URI is marked safe
// here, and only here: a code outside bech32's alphabet gives "" (no link).
func nostrURI(code string) template.URL {
	if !bech32RE.MatchString(code) {
		return ""
	}
	return template.URL("nostr:" + code)
}

// target shows a consent request's target: a hex key as its npub, else
// the text cut to 80 runes.
func target(s string) string {
	if len(s) == 64 {
		if n := npub(s); n != s {
			return n
		}
	}
	return clip(80, s)
}

// nevent is the NIP-19 nevent of an event id with its author ("" when
// the id is not hex).
func nevent(id, author string) string {
	s, err := nip19.EncodeEvent(id, nil, author)
	if err != nil {
		return ""
	}
	return s
}
