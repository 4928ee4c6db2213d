package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/events"
)

// writeFlags are the flags of every publishing command: relays, the
// signing key and --json.
type writeFlags struct {
	net  netFlags
	key  *keyFlag
	json bool
}

func (m *Main) addWriteFlags(fs *flag.FlagSet, w *writeFlags) {
	m.addNetFlags(fs, &w.net)
	w.key = addKeyFlag(fs, "key", "AGENTNODE_KEY", "signing")
	fs.BoolVar(&w.json, "json", false, "print the signed event as JSON")
}

// sign stamps (unless already stamped), signs and validates tmpl. A
// validation failure is reported before anything is sent.
func sign(cmd string, tmpl nostr.Event, sk string) (*nostr.Event, error) {
	evt := tmpl
	if evt.CreatedAt == 0 {
		evt.CreatedAt = nostr.Now()
	}
	if err := evt.Sign(sk); err != nil {
		return nil, fmt.Errorf("%s: sign: %w", cmd, err)
	}
	if err := events.Validate(&evt); err != nil {
		return nil, fmt.Errorf("%s: refusing to publish an invalid event: %w", cmd, err)
	}
	return &evt, nil
}

// publish sends evt to every relay of s and reports it: the id and its
// NIP-19 pointer, or with --json the signed event. It fails when any relay
// refused the event, quoting the relay's reason.
func (m *Main) publish(ctx context.Context, cmd string, s *session, evt *nostr.Event, asJSON bool) error {
	accepted, err := s.publish(ctx, evt)
	if len(accepted) > 0 {
		if perr := m.reportPublished(evt, accepted, asJSON); perr != nil {
			return perr
		}
	}
	if err != nil {
		return fmt.Errorf("%s: %w", cmd, err)
	}
	return nil
}

func (m *Main) reportPublished(evt *nostr.Event, accepted []string, asJSON bool) error {
	if asJSON {
		return writeJSON(m.Stdout, evt)
	}
	fmt.Fprintf(m.Stdout, "published kind %d event %s\n", evt.Kind, evt.ID)
	fmt.Fprintf(m.Stdout, "  %s\n", pointer(evt, accepted))
	fmt.Fprintf(m.Stdout, "  signed by %s\n", npub(evt.PubKey))
	fmt.Fprintf(m.Stdout, "  accepted by %s\n", strings.Join(accepted, ", "))
	return nil
}

// signAndPublish is the whole write path of a command that reads nothing
// first: key, sign and validate, connect, publish, report.
func (m *Main) signAndPublish(ctx context.Context, cmd string, w *writeFlags, tmpl nostr.Event) error {
	sk, err := w.key.secret(m, cmd)
	if err != nil {
		return err
	}
	evt, err := sign(cmd, tmpl, sk)
	if err != nil {
		return err
	}
	s, err := m.dial(ctx, &w.net)
	if err != nil {
		return fmt.Errorf("%s: %w", cmd, err)
	}
	defer s.Close()
	if err := refusePublicKey(ctx, cmd, w.key, s, sk); err != nil {
		return err
	}
	return m.publish(ctx, cmd, s, evt, w.json)
}
