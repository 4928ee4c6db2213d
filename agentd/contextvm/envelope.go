package contextvm

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip44"
)

// Errors of the wire format.
var (
	// ErrNotContextVM: the event is not a ContextVM message (wrong kind,
	// or content that is not JSON: agentnode's legacy 25910 dialect).
	ErrNotContextVM = errors.New("contextvm: not a contextvm message")
	// ErrUndecryptable: a gift wrap that does not decrypt with the key.
	ErrUndecryptable = errors.New("contextvm: gift wrap does not decrypt")
	// ErrBadSignature: an event (or a wrapped one) whose id or signature
	// is not its own.
	ErrBadSignature = errors.New("contextvm: bad id or signature")
)

// Envelope is a received ContextVM message: the signed kind-25910 event
// (taken out of its gift wrap, if it came in one) and its JSON-RPC
// message.
type Envelope struct {
	Event    *nostr.Event    // the 25910, id and signature verified
	Message  jsonrpc.Message // its content
	WrapKind int             // 0: plaintext; KindGiftWrap or KindEphemeralGiftWrap
}

// Encrypted reports whether the message came gift-wrapped.
func (e *Envelope) Encrypted() bool { return e.WrapKind != 0 }

// Open reads evt (a 25910, or a gift wrap addressed to sk's key) into an
// Envelope: it unwraps, verifies the 25910's id and signature and decodes
// its JSON-RPC content.
func Open(evt *nostr.Event, sk string) (*Envelope, error) {
	env := &Envelope{Event: evt}
	if isWrap(evt.Kind) {
		inner, err := Unwrap(evt, sk)
		if err != nil {
			return nil, err
		}
		env.Event, env.WrapKind = inner, evt.Kind
	} else if evt.Kind != KindMessage {
		return nil, ErrNotContextVM
	}
	if !verified(env.Event) {
		return nil, ErrBadSignature
	}
	msg, err := Decode(env.Event)
	if err != nil {
		return nil, err
	}
	env.Message = msg
	return env, nil
}

// Decode returns the JSON-RPC message of a kind-25910 event. Content that
// is not a JSON object is ErrNotContextVM.
func Decode(evt *nostr.Event) (jsonrpc.Message, error) {
	if evt.Kind != KindMessage || !strings.HasPrefix(strings.TrimSpace(evt.Content), "{") {
		return nil, ErrNotContextVM
	}
	msg, err := jsonrpc.DecodeMessage([]byte(evt.Content))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotContextVM, err)
	}
	return msg, nil
}

// NewMessage builds and signs the kind-25910 event carrying msg.
func NewMessage(msg jsonrpc.Message, sk string, tags nostr.Tags) (*nostr.Event, error) {
	content, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return nil, fmt.Errorf("contextvm: encode: %w", err)
	}
	evt := &nostr.Event{Kind: KindMessage, CreatedAt: nostr.Now(), Tags: tags, Content: string(content)}
	if err := evt.Sign(sk); err != nil {
		return nil, fmt.Errorf("contextvm: sign: %w", err)
	}
	return evt, nil
}

// Wrap gift-wraps the signed event inner for recipient (CEP-4): a kind
// (KindGiftWrap or KindEphemeralGiftWrap) event from a one-time key whose
// content is inner, NIP-44 encrypted to recipient, and whose only tag
// p-tags recipient. There is no seal: inner's own signature authenticates it.
func Wrap(inner *nostr.Event, recipient string, kind int) (*nostr.Event, error) {
	if !isWrap(kind) {
		return nil, fmt.Errorf("contextvm: %d is not a gift wrap kind", kind)
	}
	plain, err := json.Marshal(inner)
	if err != nil {
		return nil, err
	}
	once := nostr.GeneratePrivateKey()
	key, err := nip44.GenerateConversationKey(recipient, once)
	if err != nil {
		return nil, fmt.Errorf("contextvm: conversation key: %w", err)
	}
	content, err := nip44.Encrypt(string(plain), key)
	if err != nil {
		return nil, fmt.Errorf("contextvm: encrypt: %w", err)
	}
	wrap := &nostr.Event{Kind: kind, CreatedAt: nostr.Now(), Tags: nostr.Tags{{"p", recipient}}, Content: content}
	if err := wrap.Sign(once); err != nil {
		return nil, fmt.Errorf("contextvm: sign: %w", err)
	}
	return wrap, nil
}

// Unwrap returns the event inside a gift wrap addressed to sk's key. The
// inner event is not verified here (Open does).
func Unwrap(wrap *nostr.Event, sk string) (*nostr.Event, error) {
	if !isWrap(wrap.Kind) {
		return nil, ErrNotContextVM
	}
	if !verified(wrap) {
		return nil, ErrBadSignature
	}
	key, err := nip44.GenerateConversationKey(wrap.PubKey, sk)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUndecryptable, err)
	}
	plain, err := nip44.Decrypt(wrap.Content, key)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUndecryptable, err)
	}
	var inner nostr.Event
	if err := json.Unmarshal([]byte(plain), &inner); err != nil || inner.Kind != KindMessage {
		return nil, fmt.Errorf("%w: the wrap holds no kind-25910 event", ErrNotContextVM)
	}
	return &inner, nil
}

// Seal is the event to publish for inner: inner itself when wrapKind is
// 0, else inner gift-wrapped for recipient.
func Seal(inner *nostr.Event, recipient string, wrapKind int) (*nostr.Event, error) {
	if wrapKind == 0 {
		return inner, nil
	}
	return Wrap(inner, recipient, wrapKind)
}

// verified reports whether evt's id and signature are its own.
func verified(evt *nostr.Event) bool {
	ok, err := evt.CheckSignature()
	return ok && err == nil && evt.CheckID()
}

// tagValue is the first value of evt's tag name ("" if none).
func tagValue(evt *nostr.Event, name string) string {
	if t := evt.Tags.Find(name); len(t) >= 2 {
		return t[1]
	}
	return ""
}

// hasFlag reports whether tags hold the single-element tag name.
func hasFlag(tags nostr.Tags, name string) bool {
	for _, t := range tags {
		if len(t) == 1 && t[0] == name {
			return true
		}
	}
	return false
}
