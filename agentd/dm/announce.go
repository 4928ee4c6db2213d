package dm

import (
	"context"
	"fmt"
	"slices"

	"github.com/nbd-wtf/go-nostr"
)

// announceAll publishes every local agent's DM relay list; failures are
// logged (the node still answers DMs that reach it).
func (s *Service) announceAll(ctx context.Context) {
	for _, agent := range s.cfg.Agents() {
		if err := s.Announce(ctx, agent); err != nil {
			s.cfg.Logger.Warn("dm: DM relay list not published", "agent", agent, "err", err)
		}
	}
}

// Announce publishes agent's kind 10050 DM relay list and its NIP-65 relay
// list (kind 10002) naming Config.RelayURLs, unless the latest stored ones
// name exactly those.
// Call it for an agent installed after Run started. No RelayURLs: nothing.
func (s *Service) Announce(ctx context.Context, agent string) error {
	if len(s.cfg.RelayURLs) == 0 {
		return nil
	}
	sk, err := s.cfg.Keys(ctx, agent)
	if err != nil {
		return fmt.Errorf("dm: announce %s: %w", agent, err)
	}
	if err := s.announceOutbox(ctx, agent, sk); err != nil { // NIP-65 (nip65.go)
		return err
	}
	stored, err := s.cfg.Source.QuerySync(ctx, nostr.Filter{Kinds: []int{nostr.KindDMRelayList}, Authors: []string{agent}, Limit: 1})
	if err != nil {
		return fmt.Errorf("dm: announce %s: %w", agent, err)
	}
	if len(stored) > 0 && slices.Equal(relaysOf(stored[0]), s.cfg.RelayURLs) {
		return nil
	}
	evt := RelayList(s.cfg.RelayURLs, nostr.Timestamp(s.cfg.Now().Unix()))
	if err := evt.Sign(sk); err != nil {
		return fmt.Errorf("dm: announce %s: %w", agent, err)
	}
	if err := s.cfg.Publish(ctx, evt); err != nil {
		return fmt.Errorf("dm: announce %s: %w", agent, err)
	}
	return nil
}

// RelayList is an unsigned kind 10050 naming urls.
func RelayList(urls []string, at nostr.Timestamp) *nostr.Event {
	evt := &nostr.Event{Kind: nostr.KindDMRelayList, CreatedAt: at, Tags: nostr.Tags{}}
	for _, u := range urls {
		evt.Tags = append(evt.Tags, nostr.Tag{"relay", u})
	}
	return evt
}

// relaysOf is the relay URLs of a 10050.
func relaysOf(evt *nostr.Event) []string {
	var urls []string
	for _, tag := range evt.Tags {
		if len(tag) >= 2 && tag[0] == "relay" {
			urls = append(urls, tag[1])
		}
	}
	return urls
}
