package dm

import (
	"fmt"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip44"
	"github.com/nbd-wtf/go-nostr/nip59"
)

// ReplyRumor is the agent's kind 14 answer to in: ["p", sender] and
// ["e", <in's id>] (a reply, NIP-17).
func ReplyRumor(agent string, in *nostr.Event, text string, at nostr.Timestamp) nostr.Event {
	rumor := nostr.Event{
		Kind:      nostr.KindDirectMessage,
		PubKey:    agent,
		CreatedAt: at,
		Tags:      nostr.Tags{{"p", in.PubKey}, {"e", in.ID}},
		Content:   text,
	}
	rumor.ID = rumor.GetID()
	return rumor
}

// Wrap seals rumor with sk (its author's key) and gift-wraps it to
// recipient with a fresh one-time key (NIP-59).
func Wrap(rumor nostr.Event, sk, recipient string) (*nostr.Event, error) {
	key, err := nip44.GenerateConversationKey(recipient, sk)
	if err != nil {
		return nil, fmt.Errorf("dm: wrap to %s: %w", recipient, err)
	}
	wrap, err := nip59.GiftWrap(rumor, recipient,
		func(plain string) (string, error) { return nip44.Encrypt(plain, key) },
		func(seal *nostr.Event) error { return seal.Sign(sk) },
		nil)
	if err != nil {
		return nil, fmt.Errorf("dm: wrap to %s: %w", recipient, err)
	}
	return &wrap, nil
}

// WrapBoth wraps rumor to its recipient and, as the author's own copy
// (NIP-17: clients show sent messages from it), to the author.
func WrapBoth(rumor nostr.Event, sk, recipient string) (toThem, toSelf *nostr.Event, err error) {
	if toThem, err = Wrap(rumor, sk, recipient); err != nil {
		return nil, nil, err
	}
	if toSelf, err = Wrap(rumor, sk, rumor.PubKey); err != nil {
		return nil, nil, err
	}
	return toThem, toSelf, nil
}
