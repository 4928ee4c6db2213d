package main

import (
	"context"
	"fmt"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/capabilities/acp"
	"github.com/agentnode/agentnode/events"
)

const capPublishUsage = `cap publish <file> [--key NSEC] [--relay URL]... [--json]

Publishes the package as a kind-30199 event (content = the file byte for
byte, d = <name>@<version>). The file must be valid and signed by the
publishing key (sign it first with ` + "`agentnode cap sign`" + `). A published
(author, name, version) is immutable: change the version to publish changes.`

// runCapPublish: cap publish (see capPublishUsage).
func runCapPublish(ctx context.Context, m *Main, args []string) error {
	const cmd = "cap publish"
	var w writeFlags
	fs := m.newFlagSet(cmd, capPublishUsage)
	m.addWriteFlags(fs, &w)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	file, err := fileArg(cmd, pos)
	if err != nil {
		return err
	}
	sk, err := w.key.secret(m, cmd)
	if err != nil {
		return err
	}
	evt, err := capEvent(m, cmd, file, sk)
	if err != nil {
		return err
	}
	s, err := m.dial(ctx, &w.net)
	if err != nil {
		return fmt.Errorf("%s: %w", cmd, err)
	}
	defer s.Close()
	return m.publish(ctx, cmd, s, evt, w.json)
}

// capEvent reads, checks and signs the package's kind-30199 event.
func capEvent(m *Main, cmd, file, sk string) (*nostr.Event, error) {
	raw, p, err := readPackage(m, cmd, file)
	if err != nil {
		return nil, err
	}
	signer, err := verifyPackage(cmd, file, raw)
	if err != nil {
		return nil, err
	}
	if signer.KeyType == acp.KeyEd25519 {
		return nil, fmt.Errorf("%s: %s is signed with an Ed25519 key (%s): a kind-30199 event is signed by a Nostr (secp256k1) key, and a registry lists a package only when the file is signed by the event's author; "+
			"install it from the file as it is (agentnode agent cap install <agent> %s), or sign it with your Nostr key (agentnode cap sign, --format nostr or did-key) to publish it", cmd, file, signer.DID, file)
	}
	if pk, author := nostrKey(sk), signer.ID(); pk != author {
		return nil, fmt.Errorf("%s: %s is signed by %s, but the publishing key is %s: sign it with this key", cmd, file, author, pk)
	}
	evt, err := sign(cmd, acp.EventTemplate(p), sk)
	if err != nil {
		return nil, err
	}
	if err := events.ValidateCapability(evt); err != nil {
		return nil, fmt.Errorf("%s: refusing to publish an invalid event: %w", cmd, err)
	}
	return evt, nil
}

func nostrKey(sk string) string {
	pk, _ := nostr.GetPublicKey(sk)
	return pk
}
