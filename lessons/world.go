package lessons

import (
	"github.com/agentnode/agentnode/events"
	"github.com/nbd-wtf/go-nostr"
)

// newestProfiles parses kind 0 events, keeping the newest per pubkey.
func newestProfiles(evts []*nostr.Event) map[string]*events.Profile {
	out := map[string]*events.Profile{}
	for _, evt := range evts {
		p, err := events.ParseProfile(evt)
		if err != nil {
			continue
		}
		if cur := out[p.PubKey]; cur == nil || replaces(p.CreatedAt, p.ID, cur.CreatedAt, cur.ID) {
			out[p.PubKey] = p
		}
	}
	return out
}

// newestClaims parses kind 14199 events, keeping the newest per owner.
func newestClaims(evts []*nostr.Event) map[string]*events.OwnerClaims {
	out := map[string]*events.OwnerClaims{}
	for _, evt := range evts {
		c, err := events.ParseOwnerClaims(evt)
		if err != nil {
			continue
		}
		if cur := out[c.PubKey]; cur == nil || replaces(c.CreatedAt, c.ID, cur.CreatedAt, cur.ID) {
			out[c.PubKey] = c
		}
	}
	return out
}

// replaces reports whether an event (at, id) replaces the current one under
// NIP-01's replaceable rule: later created_at, or the same with the lower id.
func replaces(at nostr.Timestamp, id string, curAt nostr.Timestamp, curID string) bool {
	return at > curAt || (at == curAt && id < curID)
}

// follows returns the "p" pubkeys of owner's newest kind 3 contact list.
func follows(evts []*nostr.Event, owner string) map[string]bool {
	var latest *nostr.Event
	for _, evt := range evts {
		if evt.Kind == 3 && evt.PubKey == owner && (latest == nil || events.Supersedes(evt, latest)) {
			latest = evt
		}
	}
	out := map[string]bool{}
	if latest == nil {
		return out
	}
	for _, t := range latest.Tags {
		if len(t) >= 2 && t[0] == "p" && events.IsHex64(t[1]) {
			out[t[1]] = true
		}
	}
	return out
}

// deletions maps each event id named by a kind 5 "e" tag to the pubkeys that
// asked for its deletion. Only the target's own author counts (checked by
// the caller).
func deletions(evts []*nostr.Event) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	for _, evt := range evts {
		if evt.Kind != events.KindDeletion {
			continue
		}
		for _, t := range evt.Tags {
			if len(t) >= 2 && t[0] == "e" {
				if out[t[1]] == nil {
					out[t[1]] = map[string]bool{}
				}
				out[t[1]][evt.PubKey] = true
			}
		}
	}
	return out
}
