package dm

import (
	"context"
	"fmt"
	"slices"

	"github.com/nbd-wtf/go-nostr"
)

// kindRelayList is NIP-65's relay list (kind 10002).
const kindRelayList = 10002

// announceOutbox publishes agent's NIP-65 relay list (kind 10002) naming
// Config.RelayURLs as read and write relays, unless the latest stored one
// names exactly those: other nodes look an agent's events up there
// (agentd/lookup; issue 23).
func (s *Service) announceOutbox(ctx context.Context, agent, sk string) error {
	stored, err := s.cfg.Source.QuerySync(ctx, nostr.Filter{Kinds: []int{kindRelayList}, Authors: []string{agent}, Limit: 1})
	if err != nil {
		return fmt.Errorf("dm: relay list of %s: %w", agent, err)
	}
	if len(stored) > 0 && slices.Equal(outboxRelaysOf(stored[0]), s.cfg.RelayURLs) {
		return nil
	}
	evt := OutboxRelayList(s.cfg.RelayURLs, nostr.Timestamp(s.cfg.Now().Unix()))
	if err := evt.Sign(sk); err != nil {
		return fmt.Errorf("dm: relay list of %s: %w", agent, err)
	}
	if err := s.cfg.Publish(ctx, evt); err != nil {
		return fmt.Errorf("dm: relay list of %s: %w", agent, err)
	}
	return nil
}

// OutboxRelayList is an unsigned NIP-65 kind 10002 naming urls for reading
// and writing.
func OutboxRelayList(urls []string, at nostr.Timestamp) *nostr.Event {
	evt := &nostr.Event{Kind: kindRelayList, CreatedAt: at, Tags: nostr.Tags{}}
	for _, u := range urls {
		evt.Tags = append(evt.Tags, nostr.Tag{"r", u})
	}
	return evt
}

// outboxRelaysOf is the "r" URLs of a 10002.
func outboxRelaysOf(evt *nostr.Event) []string {
	var urls []string
	for _, tag := range evt.Tags {
		if len(tag) >= 2 && tag[0] == "r" {
			urls = append(urls, tag[1])
		}
	}
	return urls
}
