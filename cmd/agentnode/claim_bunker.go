package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/events"
)

// DefaultBunkerTimeout bounds each request to a NIP-46 remote signer: long
// enough for a person to approve it in their signer app.
const DefaultBunkerTimeout = 2 * time.Minute

// ownerSigner signs as the owner: with a secret key held in memory
// (--owner-key) or through a NIP-46 remote signer (--bunker) that never
// hands the key out.
type ownerSigner interface {
	// pubkey is the owner's public key (64-hex).
	pubkey(ctx context.Context) (string, error)
	// sign signs tmpl as the owner and validates the result.
	sign(ctx context.Context, cmd string, tmpl nostr.Event) (*nostr.Event, error)
	close()
}

// keySigner signs with a secret key in memory.
type keySigner struct{ sk string }

func (k keySigner) pubkey(context.Context) (string, error) { return nostr.GetPublicKey(k.sk) }
func (k keySigner) sign(_ context.Context, cmd string, tmpl nostr.Event) (*nostr.Event, error) {
	return sign(cmd, tmpl, k.sk)
}
func (keySigner) close() {}

// ownerFlags are --owner-key and --bunker (with their environment
// fallbacks); exactly one must end up set.
type ownerFlags struct {
	key           *keyFlag
	bunker        string
	bunkerTimeout time.Duration
}

func addOwnerFlags(fs *flag.FlagSet, o *ownerFlags) {
	o.key = addKeyFlag(fs, "owner-key", "AGENTNODE_OWNER_KEY", "the owner's")
	fs.StringVar(&o.bunker, "bunker", "", "sign as the owner through a NIP-46 remote signer: bunker://<signer pubkey>?relay=wss://...&secret=... (env AGENTNODE_OWNER_BUNKER); instead of --owner-key")
	fs.DurationVar(&o.bunkerTimeout, "bunker-timeout", DefaultBunkerTimeout, "bound on each request to the --bunker signer (time to approve it)")
}

// signer returns the owner's signer: --owner-key or --bunker given on the
// command line win over the environment; both at once is a usage error.
func (o *ownerFlags) signer(ctx context.Context, m *Main, cmd string, nf *netFlags) (ownerSigner, error) {
	switch {
	case o.key.value != "" && o.bunker != "":
		return nil, usagef("%s: give --owner-key or --bunker, not both", cmd)
	case o.key.value != "":
		return o.keySigner(m, cmd)
	case o.bunker != "":
		return m.connectBunker(ctx, cmd, o.bunker, nf.timeout, o.bunkerTimeout)
	}
	envKey, envBunker := m.envOr(o.key.env, ""), m.envOr("AGENTNODE_OWNER_BUNKER", "")
	switch {
	case envKey != "" && envBunker != "":
		return nil, usagef("%s: both %s and AGENTNODE_OWNER_BUNKER are set: unset one, or pass --owner-key or --bunker", cmd, o.key.env)
	case envBunker != "":
		return m.connectBunker(ctx, cmd, envBunker, nf.timeout, o.bunkerTimeout)
	case envKey == "":
		return nil, usagef("%s: no owner key: pass --owner-key (nsec or hex) or set %s, or sign through a NIP-46 bunker with --bunker or AGENTNODE_OWNER_BUNKER", cmd, o.key.env)
	}
	return o.keySigner(m, cmd)
}

func (o *ownerFlags) keySigner(m *Main, cmd string) (ownerSigner, error) {
	sk, err := o.key.secret(m, cmd)
	if err != nil {
		return nil, err
	}
	return keySigner{sk}, nil
}

// bunkerSigner signs through a NIP-46 remote signer.
type bunkerSigner struct {
	rpc     *bunkerRPC
	timeout time.Duration // per request
	target  string        // the signer's pubkey, for messages
	owner   string
}

// parseBunkerURL checks a bunker:// URL: the remote signer's pubkey (hex)
// and at least one ws:// or wss:// relay.
func parseBunkerURL(cmd, raw string) (signerPK string, relays []string, err error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "bunker" {
		return "", nil, usagef("%s: --bunker: want bunker://<signer pubkey>?relay=wss://...[&secret=...], got %q", cmd, redactBunker(raw))
	}
	if !nostr.IsValidPublicKey(u.Host) {
		return "", nil, usagef("%s: --bunker: %q is not a hex public key", cmd, u.Host)
	}
	for _, r := range u.Query()["relay"] {
		if !strings.HasPrefix(r, "ws://") && !strings.HasPrefix(r, "wss://") {
			return "", nil, usagef("%s: --bunker: relay %q is not ws:// or wss://", cmd, r)
		}
		relays = append(relays, r)
	}
	if len(relays) == 0 {
		return "", nil, usagef("%s: --bunker: the URL names no relay (add ?relay=wss://...)", cmd)
	}
	return u.Host, relays, nil
}

// redactBunker hides a bunker URL's secret in messages.
func redactBunker(raw string) string {
	if i := strings.Index(raw, "secret="); i >= 0 {
		end := strings.IndexByte(raw[i:], '&')
		if end < 0 {
			return raw[:i] + "secret=REDACTED"
		}
		return raw[:i] + "secret=REDACTED" + raw[i+end:]
	}
	return raw
}

// connectBunker reaches the remote signer over its relays, connects (with
// the URL's secret) and asks for the owner's pubkey. The client key is
// fresh for every run and never stored.
func (m *Main) connectBunker(ctx context.Context, cmd, raw string, dialTimeout, timeout time.Duration) (ownerSigner, error) {
	target, relays, err := parseBunkerURL(cmd, raw)
	if err != nil {
		return nil, err
	}
	onAuth := func(authURL string) {
		fmt.Fprintf(m.Stderr, "%s: the bunker asks you to approve this client at %s\n", cmd, authURL)
	}
	rpc, err := dialBunker(ctx, target, relays, dialTimeout, onAuth)
	if err != nil {
		return nil, fmt.Errorf("%s: the bunker is unreachable: cannot connect to any of its relays: %w", cmd, err)
	}
	b := &bunkerSigner{rpc: rpc, timeout: timeout, target: target}
	secret := ""
	if u, err := url.Parse(raw); err == nil {
		secret = u.Query().Get("secret")
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if _, err := rpc.call(rctx, "connect", target, secret); err != nil {
		b.close()
		return nil, b.failure(cmd, "connect", rctx, err)
	}
	owner, err := rpc.call(rctx, "get_public_key")
	if err == nil && !nostr.IsValidPublicKey(owner) {
		err = fmt.Errorf("it answered %q, not a public key", owner)
	}
	if err != nil {
		b.close()
		return nil, b.failure(cmd, "get_public_key", rctx, err)
	}
	b.owner = owner
	fmt.Fprintf(m.Stderr, "%s: connected to bunker %s, signing as owner %s\n", cmd, npub(target), npub(owner))
	return b, nil
}

// failure turns an RPC error into a message saying whether the bunker
// refused or did not answer.
func (b *bunkerSigner) failure(cmd, method string, ctx context.Context, err error) error {
	if errors.Is(err, errBunkerRefused) {
		msg := strings.TrimPrefix(err.Error(), errBunkerRefused.Error()+": ")
		return fmt.Errorf("%s: the bunker %s refused %s: %s", cmd, npub(b.target), method, msg)
	}
	if errors.Is(err, errBunkerNotListening) {
		return fmt.Errorf("%s: the bunker %s is not listening on its relays (is the remote signer running?): %w", cmd, npub(b.target), err)
	}
	if ctx.Err() != nil {
		return fmt.Errorf("%s: the bunker %s did not answer %s within %s (is the remote signer running and listening on its relays? approve the request there, or raise --bunker-timeout)", cmd, npub(b.target), method, b.timeout)
	}
	return fmt.Errorf("%s: bunker %s: %s: %w", cmd, npub(b.target), method, err)
}

func (b *bunkerSigner) pubkey(context.Context) (string, error) { return b.owner, nil }

func (b *bunkerSigner) sign(ctx context.Context, cmd string, tmpl nostr.Event) (*nostr.Event, error) {
	evt := tmpl
	if evt.CreatedAt == 0 {
		evt.CreatedAt = nostr.Now()
	}
	evt.PubKey = b.owner
	asked := evt
	rctx, cancel := context.WithTimeout(ctx, b.timeout)
	defer cancel()
	res, err := b.rpc.call(rctx, "sign_event", evt.String())
	if err != nil {
		return nil, b.failure(cmd, "sign_event", rctx, err)
	}
	evt = nostr.Event{}
	if err := json.Unmarshal([]byte(res), &evt); err != nil {
		return nil, fmt.Errorf("%s: the bunker's sign_event answer is not an event: %w", cmd, err)
	}
	if !evt.CheckID() {
		return nil, fmt.Errorf("%s: the bunker's signed event has a wrong id", cmd)
	}
	if ok, _ := evt.CheckSignature(); !ok {
		return nil, fmt.Errorf("%s: the bunker's signed event has an invalid signature", cmd)
	}
	if evt.PubKey != b.owner {
		return nil, fmt.Errorf("%s: the bunker signed as %s, not as the owner %s it announced", cmd, npub(evt.PubKey), npub(b.owner))
	}
	if evt.Kind != asked.Kind || evt.Content != asked.Content || evt.CreatedAt != asked.CreatedAt || !tagsEqual(evt.Tags, asked.Tags) {
		return nil, fmt.Errorf("%s: the bunker returned a different event than it was asked to sign", cmd)
	}
	if err := events.Validate(&evt); err != nil {
		return nil, fmt.Errorf("%s: refusing to publish an invalid event: %w", cmd, err)
	}
	return &evt, nil
}

func tagsEqual(a, b nostr.Tags) bool {
	return slices.EqualFunc(a, b, func(x, y nostr.Tag) bool { return slices.Equal(x, y) })
}

func (b *bunkerSigner) close() { b.rpc.close() }
