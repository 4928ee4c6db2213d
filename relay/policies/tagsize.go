package policies

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/nbd-wtf/go-nostr"
)

// AgentTagValueBytes is the longest tag value accepted on the kinds agent
// tooling writes long text into. TENEX, NIP-AE's reference implementation,
// writes a definition's whole "instructions" (4199), an agent's compiled
// "instruction" (kind 0) and a tool call's "tool-args" (kind 1, which it
// caps at 100,000 bytes) as single tag values. The bound is the largest
// item the event store's binary layout holds (a u16 length: 65,535 bytes,
// relay/internal/lmdbw codec.go): four times the 16 KiB default, enough for
// long instructions; tool-args between 64 KiB and 100,000 bytes are refused
// with the limit in the message (docs/INTEROP.md).
const AgentTagValueBytes = 65535

// AgentTextKinds are the kinds that get AgentTagValueBytes: profiles (0),
// notes carrying tool calls (1), lesson comments (1111), lessons (4129),
// definitions (4199) and nudges (4201).
var AgentTextKinds = []int{0, 1, 1111, 4129, 4199, 4201}

// TagValueLimits are the per-kind bounds on a single tag value: ByKind
// where a kind is listed, else Default.
type TagValueLimits struct {
	Default int
	ByKind  map[int]int
}

// AgentTagValueLimits raises base to AgentTagValueBytes on AgentTextKinds
// and keeps base for every other kind. A base above AgentTagValueBytes
// holds everywhere: an operator can widen, never narrow below, the kinds
// agent tooling writes.
func AgentTagValueLimits(base int) TagValueLimits {
	l := TagValueLimits{Default: base, ByKind: make(map[int]int, len(AgentTextKinds))}
	for _, k := range AgentTextKinds {
		l.ByKind[k] = max(base, AgentTagValueBytes)
	}
	return l
}

// For is the limit for kind.
func (l TagValueLimits) For(kind int) int {
	if n, ok := l.ByKind[kind]; ok {
		return n
	}
	return l.Default
}

// Advertised is the per-kind table as NIP-11 publishes it: kind number (as
// a string, JSON object keys being strings) to bytes, only where it differs
// from Default.
func (l TagValueLimits) Advertised() map[string]int {
	out := make(map[string]int)
	for _, k := range slices.Sorted(maps.Keys(l.ByKind)) {
		if n := l.ByKind[k]; n != l.Default {
			out[strconv.Itoa(k)] = n
		}
	}
	return out
}

// RejectOversizedByKind bounds content size, tag count and tag value
// length, the last per kind (TagValueLimits).
func RejectOversizedByKind(maxContent, maxTags int, tagValue TagValueLimits) func(context.Context, *nostr.Event) (bool, string) {
	return func(_ context.Context, evt *nostr.Event) (reject bool, msg string) {
		if len(evt.Content) > maxContent {
			return true, fmt.Sprintf("invalid: content is %d bytes, the limit is %d", len(evt.Content), maxContent)
		}
		if len(evt.Tags) > maxTags {
			return true, fmt.Sprintf("invalid: %d tags, the limit is %d", len(evt.Tags), maxTags)
		}
		limit := tagValue.For(evt.Kind)
		for _, tag := range evt.Tags {
			for _, v := range tag {
				if len(v) > limit {
					return true, fmt.Sprintf("invalid: a %q tag value is %d bytes, the limit for kind %d is %d", tag[0], len(v), evt.Kind, limit)
				}
			}
		}
		return false, ""
	}
}
