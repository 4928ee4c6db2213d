package khatru

import (
	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip45"
)

// hyperLogLogOffset is the NIP-45 HyperLogLog offset of a COUNT filter:
// the HyperLogLogOffset hook's when set, else go-nostr's. PATCH (agentnode).
func (rl *Relay) hyperLogLogOffset(filter nostr.Filter) int {
	if rl.HyperLogLogOffset != nil {
		return rl.HyperLogLogOffset(filter)
	}
	return nip45.HyperLogLogEventPubkeyOffsetForFilter(filter)
}
