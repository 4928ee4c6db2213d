package events

import (
	"fmt"
	"strings"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip19"
)

// secp256k1Order is n, the group order; a secret key must be in [1, n-1].
// Comparing 64-digit lower-case hex strings compares the numbers.
const secp256k1Order = "fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141"

// Ref is a parsed event reference. For an naddr, ID is empty and Kind,
// Author and Identifier name the addressable event.
type Ref struct {
	ID         string
	Kind       int
	Author     string
	Identifier string
	Relays     []string
}

// IsHex64 reports whether s is exactly 64 lower-case hex characters.
func IsHex64(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// ParsePubKey accepts an npub, an nprofile or 64 hex characters (any case,
// optional "nostr:" prefix, surrounding space) and returns lower-case hex.
func ParsePubKey(s string) (string, error) {
	s = cleanInput(s)
	if h := strings.ToLower(s); IsHex64(h) {
		return h, nil
	}
	prefix, value, err := decodeNIP19(s)
	switch v := value.(type) {
	case string:
		if err == nil && prefix == "npub" {
			return v, nil
		}
	case nostr.ProfilePointer:
		if err == nil {
			return v.PublicKey, nil
		}
	}
	if prefix == "nsec" || strings.HasPrefix(strings.ToLower(s), "nsec1") {
		return "", fmt.Errorf("parse pubkey: got a secret key (nsec): %w", ErrBadPubKey)
	}
	if err != nil && (prefix == "npub" || prefix == "nprofile" || strings.HasPrefix(strings.ToLower(s), "npub1")) {
		return "", pubKeyError(fmt.Sprintf("parse pubkey %q: not a valid npub (%v)", clip(s, 80), err))
	}
	return "", pubKeyError(fmt.Sprintf("parse pubkey %q: want an npub, an nprofile or 64 hex characters", clip(s, 80)))
}

// pubKeyError says what was wrong with a public key argument; it is an
// ErrBadPubKey (errors.Is) without repeating that sentinel's text, which
// speaks of tag values.
type pubKeyError string

func (e pubKeyError) Error() string { return string(e) }
func (e pubKeyError) Unwrap() error { return ErrBadPubKey }

// ParseSecretKey accepts an nsec or 64 hex characters and returns lower-case
// hex. Errors never echo the input.
func ParseSecretKey(s string) (string, error) {
	s = cleanInput(s)
	h := strings.ToLower(s)
	if !IsHex64(h) {
		prefix, value, err := decodeNIP19(s)
		v, ok := value.(string)
		if err != nil || prefix != "nsec" || !ok {
			return "", fmt.Errorf("parse secret key: want nsec1... or 64 hex characters: %w", ErrBadSecretKey)
		}
		h = v
	}
	if h == strings.Repeat("0", 64) || h >= secp256k1Order {
		return "", fmt.Errorf("parse secret key: out of range for secp256k1: %w", ErrBadSecretKey)
	}
	return h, nil
}

// ParseRef accepts an nevent, note, naddr or 64-hex event id (any case,
// optional "nostr:" prefix, surrounding space).
func ParseRef(s string) (Ref, error) {
	s = cleanInput(s)
	if h := strings.ToLower(s); IsHex64(h) {
		return Ref{ID: h}, nil
	}
	prefix, value, err := decodeNIP19(s)
	if r, ok := refFrom(prefix, value); ok && (err == nil || prefix == "naddr" && isReplaceableAddr(r)) {
		return r, nil
	}
	return Ref{}, fmt.Errorf("parse ref %q: want nevent1, note1, naddr1 or 64 hex characters: %w", clip(s, 80), ErrBadRef)
}

// refFrom converts a decoded NIP-19 value into a Ref.
func refFrom(prefix string, value any) (Ref, bool) {
	switch v := value.(type) {
	case string:
		return Ref{ID: v}, prefix == "note"
	case nostr.EventPointer:
		return Ref{ID: v.ID, Kind: v.Kind, Author: v.Author, Relays: v.Relays}, true
	case nostr.EntityPointer:
		return Ref{Kind: v.Kind, Author: v.PublicKey, Identifier: v.Identifier, Relays: v.Relays}, true
	}
	return Ref{}, false
}

// isReplaceableAddr reports whether r is an naddr of a replaceable kind with
// the empty identifier NIP-19 prescribes for it; nip19.Decode reports those as
// "incomplete naddr" though nip19.EncodeEntity produces them.
func isReplaceableAddr(r Ref) bool {
	replaceable := r.Kind == 0 || r.Kind == 3 || (r.Kind >= 10000 && r.Kind < 20000)
	return r.ID == "" && r.Identifier == "" && IsHex64(r.Author) && replaceable
}

// cleanInput trims space and a NIP-21 "nostr:" prefix.
func cleanInput(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 6 && strings.EqualFold(s[:6], "nostr:") {
		s = s[6:]
	}
	return s
}

// decodeNIP19 is nip19.Decode made total: malformed TLV data (for example an
// naddr kind shorter than 4 bytes) panics inside go-nostr; here it is an error.
func decodeNIP19(s string) (prefix string, value any, err error) {
	defer func() {
		if r := recover(); r != nil {
			prefix, value, err = "", nil, fmt.Errorf("malformed nip19 data")
		}
	}()
	return nip19.Decode(s)
}

// ParsePubKeyHints accepts what ParsePubKey accepts and also returns the relay
// hints of an nprofile (nil for an npub or hex). It never panics on
// malformed NIP-19 data.
func ParsePubKeyHints(s string) (pubkey string, relays []string, err error) {
	pubkey, err = ParsePubKey(s)
	if err != nil {
		return "", nil, err
	}
	_, value, _ := decodeNIP19(cleanInput(s))
	p, _ := value.(nostr.ProfilePointer)
	return pubkey, p.Relays, nil
}
