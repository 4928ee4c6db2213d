package dm_test

import (
	"testing"

	"github.com/agentnode/agentnode/agentd/dm"
	"github.com/nbd-wtf/go-nostr"
)

// BenchmarkUnwrap: opening one DM (two NIP-44 decryptions, one seal
// signature check).
func BenchmarkUnwrap(b *testing.B) {
	agent, sender := newParty(), newParty()
	rumor := nostr.Event{Kind: 14, PubKey: sender.pk, CreatedAt: nostr.Now(), Tags: nostr.Tags{{"p", agent.pk}}, Content: "hello"}
	wrap, err := dm.Wrap(rumor, sender.sk, agent.pk)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := dm.Unwrap(wrap, agent.sk); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReply: building the agent's reply and wrapping it twice (to the
// sender and the agent's own copy).
func BenchmarkReply(b *testing.B) {
	agent, sender := newParty(), newParty()
	in := nostr.Event{Kind: 14, PubKey: sender.pk, CreatedAt: nostr.Now(), Tags: nostr.Tags{{"p", agent.pk}}, Content: "hello"}
	in.ID = in.GetID()
	for b.Loop() {
		out := dm.ReplyRumor(agent.pk, &in, "an answer of a few words", nostr.Now())
		if _, _, err := dm.WrapBoth(out, agent.sk, sender.pk); err != nil {
			b.Fatal(err)
		}
	}
}
