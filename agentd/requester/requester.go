// Package requester carries who asked for a call through a context. The
// transport that verified the caller records it — kind 25910's signer, a
// NIP-17 DM's sender, the source of an agent/message or of a delegated
// task — and the agent daemon reads it where it builds the state.Caller of
// a tool call, so that the call runs with that requester's rights
// whichever path it takes (a tool called directly, a chat turn, the model
// loop's tool calls):
//
//	ctx = requester.With(ctx, evt.PubKey)
//	answer, err := d.Chat(ctx, agent, conversation, text) // state.* as evt.PubKey
//
// A context without a requester is the agent acting for its owner, or the
// owner (the operator's token on the HTTP endpoints).
package requester

import "context"

type key struct{}

// With returns ctx carrying pubkey (hex) as the requester; "" returns ctx
// unchanged.
func With(ctx context.Context, pubkey string) context.Context {
	if pubkey == "" {
		return ctx
	}
	return context.WithValue(ctx, key{}, pubkey)
}

// From returns the requester ctx carries, "" for none.
func From(ctx context.Context) string {
	pk, _ := ctx.Value(key{}).(string)
	return pk
}
