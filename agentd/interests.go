package agentd

import (
	"maps"
	"slices"
	"strings"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/events"
)

// filterBatch bounds the ids or pubkeys in one filter, so that a filter
// stays far below relays' message limits.
const filterBatch = 500

// Interests are the filters for what the node's agents need from other
// relays (agentd/peers pulls them): new versions of their definitions; the
// lessons on them and the comments and deletions on those; the kind 0 of
// sibling agents (["e", <definition>]) and of lesson authors; the claims
// (14199) and contact lists (3) of their owners and of the owners the
// siblings name; their attached nudges; and the agent directory's heartbeats
// and evaluations (directoryInterests). nil when no agent is installed.
// Changes says when the answer may have changed.
func (d *Daemon) Interests() []nostr.Filter {
	agents := d.List()
	if len(agents) == 0 {
		return nil
	}
	s := d.interestSets(agents)
	var out []nostr.Filter
	add := func(keys map[string]bool, build func([]string) nostr.Filter) {
		list := slices.Sorted(maps.Keys(keys))
		for start := 0; start < len(list); start += filterBatch {
			out = append(out, build(list[start:min(start+filterBatch, len(list))]))
		}
	}
	add(s.defAuthors, func(b []string) nostr.Filter { return nostr.Filter{Kinds: []int{events.KindDefinition}, Authors: b} })
	add(s.defIDs, func(b []string) nostr.Filter { return tagFilter(events.KindLesson, "e", b) })
	add(s.defIDs, func(b []string) nostr.Filter { return tagFilter(events.KindProfile, "e", b) })
	add(s.authors, func(b []string) nostr.Filter { return nostr.Filter{Kinds: []int{events.KindProfile}, Authors: b} })
	add(s.owners, func(b []string) nostr.Filter {
		return nostr.Filter{Kinds: []int{events.KindOwnerClaims, 3}, Authors: b}
	})
	add(s.lessons, func(b []string) nostr.Filter { return tagFilter(events.KindComment, "E", b) })
	add(s.lessons, func(b []string) nostr.Filter { return tagFilter(events.KindComment, "e", b) })
	add(s.lessons, func(b []string) nostr.Filter { return tagFilter(events.KindDeletion, "e", b) })
	add(s.nudges, func(b []string) nostr.Filter { return nostr.Filter{IDs: b} })
	return append(out, directoryInterests()...)
}

// directoryInterests are what the agent directory (agentd/directory) needs
// from other relays to rank agents on other nodes: every heartbeat (30333,
// which expire within minutes: NIP-40) and every agentnode evaluation
// (NIP-32 labels in the agentnode/eval namespace).
func directoryInterests() []nostr.Filter {
	return []nostr.Filter{
		{Kinds: []int{events.KindHeartbeat}},
		{Kinds: []int{events.KindLabel}, Tags: nostr.TagMap{"L": {events.EvalNamespace}}},
	}
}

// Outbox is the filter for the events the node's agents signed (profiles,
// lessons, deletions), which agentd/peers pushes to other relays. nil when
// no agent is installed.
func (d *Daemon) Outbox() []nostr.Filter {
	agents := d.List()
	if len(agents) == 0 {
		return nil
	}
	var out []nostr.Filter
	for start := 0; start < len(agents); start += filterBatch {
		var b []string
		for _, a := range agents[start:min(start+filterBatch, len(agents))] {
			b = append(b, a.PubKey)
		}
		out = append(out, nostr.Filter{Authors: b})
	}
	return out
}

func tagFilter(kind int, tag string, values []string) nostr.Filter {
	return nostr.Filter{Kinds: []int{kind}, Tags: nostr.TagMap{tag: values}}
}

// interestSet is what Interests asks for, deduplicated.
type interestSet struct {
	defIDs, defAuthors, owners, nudges, authors, lessons map[string]bool
}

// interestSets collects the sets from the registry and the compositions.
func (d *Daemon) interestSets(agents []Agent) interestSet {
	s := interestSet{map[string]bool{}, map[string]bool{}, map[string]bool{}, map[string]bool{}, map[string]bool{}, map[string]bool{}}
	for _, a := range agents {
		s.defIDs[a.DefinitionID] = true
		author, _, _ := strings.Cut(a.DefinitionKey, ":")
		s.defAuthors[author] = true
		s.owners[a.Owner] = true
		for _, n := range a.Nudges {
			s.nudges[n] = true
		}
	}
	d.live.eachComposition(func(c *composition) {
		maps.Copy(s.owners, c.owners)
		maps.Copy(s.authors, c.authors)
		for _, l := range c.eff.Lessons {
			s.lessons[l.ID] = true
		}
	})
	return s
}
