package lessons

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"hash"
	"slices"

	"github.com/nbd-wtf/go-nostr"
)

// Key hashes everything an Effective depends on: the subject (agent, owner,
// definition, nudges), the id of every event in the evidence, and the
// policy's fingerprint. Equal keys compose to equal Effectives.
func Key(s Subject, ev *Evidence, p *Policy) string {
	h := sha256.New()
	part(h, "agent", s.Agent)
	part(h, "owner", s.Owner)
	part(h, "definition", jsonOf(s.Definition))
	for _, n := range s.Nudges {
		part(h, "nudge", jsonOf(n))
	}
	if ev != nil {
		for i, list := range [][]*nostr.Event{ev.Lessons, ev.Comments, ev.Deletions, ev.Profiles, ev.Claims, ev.Contacts} {
			idsPart(h, i, list)
		}
	}
	part(h, "policy", p.Fingerprint())
	return hex.EncodeToString(h.Sum(nil))
}

// part writes a labelled, length-delimited value.
func part(h hash.Hash, label, value string) {
	h.Write([]byte(label))
	h.Write([]byte{0})
	h.Write([]byte(value))
	h.Write([]byte{0})
}

// idsPart writes the sorted ids of one evidence list (order of arrival does
// not matter).
func idsPart(h hash.Hash, list int, evts []*nostr.Event) {
	ids := eventIDs(evts)
	slices.Sort(ids)
	h.Write([]byte{byte('0' + list), 0})
	for _, id := range ids {
		h.Write([]byte(id))
	}
	h.Write([]byte{0})
}

// jsonOf is v's JSON, the stable form of a parsed definition or nudge.
func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
