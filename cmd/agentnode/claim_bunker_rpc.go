package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip04"
	"github.com/nbd-wtf/go-nostr/nip44"
	"github.com/nbd-wtf/go-nostr/nip46"

	"github.com/agentnode/agentnode/internal/relayclient"
)

// bunkerRPC is a minimal NIP-46 client: kind 24133 requests, NIP-44
// encrypted, to the remote signer over its relays, and the answers read from
// the client's own subscription. It speaks the messages of go-nostr's nip46
// package (nip46.Request, nip46.Response) but not its BunkerClient, whose
// listener can panic (send on a closed channel) when an answer arrives twice
// or after its request gave up, and whose requests can race the
// subscription that should receive their answers. Its connections are
// relayclient's (signatures and filters checked on receipt).
type bunkerRPC struct {
	clientSK, clientPK string
	target             string   // the remote signer's pubkey
	conv               [32]byte // NIP-44 conversation key
	shared             []byte   // NIP-04 shared secret (answers from older signers)
	relays             []*relayclient.Conn
	onAuth             func(url string)
	readers            sync.WaitGroup // one per subscription

	mu      sync.Mutex
	serial  int
	waiting map[string]chan nip46.Response // buffered: a reader never blocks
}

// dialBunker connects to every relay of the bunker URL and subscribes to
// the signer's answers before any request is sent. It fails only when no
// relay can be reached.
func dialBunker(ctx context.Context, target string, relayURLs []string, dialTimeout time.Duration, onAuth func(string)) (*bunkerRPC, error) {
	b := &bunkerRPC{clientSK: nostr.GeneratePrivateKey(), target: target, onAuth: onAuth, waiting: map[string]chan nip46.Response{}}
	var err error
	if b.clientPK, err = nostr.GetPublicKey(b.clientSK); err != nil {
		return nil, err
	}
	if b.conv, err = nip44.GenerateConversationKey(target, b.clientSK); err != nil {
		return nil, err
	}
	if b.shared, err = nip04.ComputeSharedSecret(target, b.clientSK); err != nil {
		return nil, err
	}
	since := nostr.Now() - 5 // tolerate a signer's clock a little behind
	filter := nostr.Filter{Kinds: []int{nostr.KindNostrConnect}, Authors: []string{target},
		Tags: nostr.TagMap{"p": {b.clientPK}}, Since: &since}
	var errs []error
	for _, u := range relayURLs {
		if err := b.listen(ctx, u, filter, dialTimeout); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", u, err))
		}
	}
	if len(b.relays) == 0 {
		return nil, errors.Join(errs...)
	}
	return b, nil
}

// listen connects to url, subscribes to the signer's answers and, once the
// relay has the subscription, reads them.
func (b *bunkerRPC) listen(ctx context.Context, url string, filter nostr.Filter, dialTimeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	r, err := relayclient.Dial(ctx, url, relayclient.Options{Verify: true})
	if err != nil {
		return err
	}
	sub, err := r.Subscribe(ctx, nostr.Filters{filter})
	if err == nil {
		if err = awaitEOSE(ctx, sub); err != nil {
			sub.Close()
		}
	}
	if err != nil {
		r.Close()
		return err
	}
	b.relays = append(b.relays, r)
	b.readers.Go(func() { b.read(r, sub) })
	return nil
}

// awaitEOSE waits until the relay has the subscription: relays may handle
// one connection's messages concurrently (khatru does), so a request sent
// right after the REQ could be answered before the REQ is in place, and
// NIP-46 answers are ephemeral. Relays send EOSE once it is.
func awaitEOSE(ctx context.Context, sub *relayclient.Sub) error {
	for {
		select {
		case <-sub.Events: // a stored answer, from before this client: not ours
			continue
		case <-sub.EOSE:
			return nil
		case reason := <-sub.Closed:
			return fmt.Errorf("the relay closed the subscription: %s", reason)
		case <-ctx.Done():
			return fmt.Errorf("no EOSE for the subscription: %w", ctx.Err())
		}
	}
}

// read hands each answer to the request waiting for it, until the
// subscription or the connection ends; answers nobody waits for (late,
// duplicated, or not for us) are dropped.
func (b *bunkerRPC) read(r *relayclient.Conn, sub *relayclient.Sub) {
	for {
		select {
		case evt := <-sub.Events:
			b.answer(evt)
		case <-sub.Closed:
			return
		case <-r.Done():
			return
		}
	}
}

// answer hands one answer to the request waiting for it.
func (b *bunkerRPC) answer(evt *nostr.Event) {
	if evt.PubKey != b.target {
		return
	}
	plain, err := nip44.Decrypt(evt.Content, b.conv)
	if err != nil {
		if plain, err = nip04.Decrypt(evt.Content, b.shared); err != nil {
			return
		}
	}
	var resp nip46.Response
	if json.Unmarshal([]byte(plain), &resp) != nil {
		return
	}
	if resp.Result == "auth_url" { // the signer wants the user to approve at resp.Error
		if b.onAuth != nil {
			b.onAuth(resp.Error)
		}
		return
	}
	b.mu.Lock()
	if ch, ok := b.waiting[resp.ID]; ok {
		delete(b.waiting, resp.ID)
		ch <- resp // buffered, at most one send per id
	}
	b.mu.Unlock()
}

var (
	// errBunkerRefused wraps an error the signer answered with.
	errBunkerRefused = errors.New("refused")
	// errBunkerNotListening: no relay took the request (plain khatru, for
	// one, refuses an ephemeral event nobody subscribes to: "mute: ...";
	// agentnode's relay takes them all, so there the call times out).
	errBunkerNotListening = errors.New("no relay took the request")
)

// call sends one request and waits for its answer until ctx ends.
func (b *bunkerRPC) call(ctx context.Context, method string, params ...string) (string, error) {
	if params == nil {
		params = []string{}
	}
	b.mu.Lock()
	b.serial++
	id := "agentnode-" + b.clientPK[:8] + "-" + strconv.Itoa(b.serial)
	ch := make(chan nip46.Response, 1)
	b.waiting[id] = ch
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		delete(b.waiting, id)
		b.mu.Unlock()
	}()

	req, err := json.Marshal(nip46.Request{ID: id, Method: method, Params: params})
	if err != nil {
		return "", err
	}
	content, err := nip44.Encrypt(string(req), b.conv)
	if err != nil {
		return "", fmt.Errorf("encrypt the request: %w", err)
	}
	evt := nostr.Event{Kind: nostr.KindNostrConnect, CreatedAt: nostr.Now(), Content: content, Tags: nostr.Tags{{"p", b.target}}}
	if err := evt.Sign(b.clientSK); err != nil {
		return "", err
	}
	var errs []error
	for _, r := range b.relays {
		if err := r.Publish(ctx, &evt); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", r.URL(), err))
		}
	}
	if len(errs) == len(b.relays) {
		return "", fmt.Errorf("%w: %w", errBunkerNotListening, errors.Join(errs...))
	}
	select {
	case resp := <-ch:
		if resp.Error != "" {
			return "", fmt.Errorf("%w: %s", errBunkerRefused, resp.Error)
		}
		return resp.Result, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// close closes every connection and waits for the readers.
func (b *bunkerRPC) close() {
	for _, r := range b.relays {
		r.Close()
	}
	b.readers.Wait()
}
