// Package policies holds the relay's rules as small khatru hooks: factory
// functions that return closures, each with named results, each refusal a
// NIP-01 prefixed message (`invalid:`, `blocked:`, `rate-limited:`).
//
//	rl.RejectEvent = append(rl.RejectEvent,
//		policies.ValidateAgentEvents(),
//		policies.RejectExpired(nostr.Now),
//		policies.GuardCapabilities(store),
//	)
package policies
