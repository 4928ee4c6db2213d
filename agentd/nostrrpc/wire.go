package nostrrpc

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip44"

	"github.com/agentnode/agentnode/jsonrpc"
)

// Kind is the JSON-RPC over Nostr event kind (ephemeral).
const Kind = 25910

// Error codes of the legacy kind-25910 dialect besides the standard
// JSON-RPC ones (jsonrpc.Code*); docs/JSONRPC.md has the whole table.
const (
	CodeServerError = -32000 // a capability error; data.cap_code says which
	// CodeRateLimited: the caller is a stranger to the agent and the
	// strangers' budget is spent (agentd/strangers); the message starts
	// with "rate-limited:".
	CodeRateLimited = -32029
)

// Codes is the legacy dialect's table of error codes besides the standard
// ones (jsonrpc.StandardCodes). A peer's ACP failure crosses with the
// Agent Context Protocol's code (agentrpc.Codes) for agent/* methods.
var Codes = []jsonrpc.CodeDoc{
	{Code: CodeServerError, Name: "capability error", Meaning: "a tool failed with a CAP error; data.cap_code says which (INVALID_INPUT is -32602)"},
	{Code: CodeRateLimited, Name: "rate-limited", Meaning: "a caller the agent does not know, over the strangers' budget or while their workers are busy"},
}

// seal encrypts v (marshalled) from sk to pub with NIP-44 v2.
func seal(v any, sk, pub string) (string, error) {
	plain, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	key, err := nip44.GenerateConversationKey(pub, sk)
	if err != nil {
		return "", fmt.Errorf("nostrrpc: conversation key: %w", err)
	}
	return nip44.Encrypt(string(plain), key)
}

// open decrypts an event's content addressed to sk's key.
func open(evt *nostr.Event, sk string) ([]byte, error) {
	key, err := nip44.GenerateConversationKey(evt.PubKey, sk)
	if err != nil {
		return nil, fmt.Errorf("nostrrpc: conversation key: %w", err)
	}
	plain, err := nip44.Decrypt(evt.Content, key)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUndecryptable, err)
	}
	return []byte(plain), nil
}

// newEvent builds and signs a kind-25910 event carrying v encrypted to pub.
func newEvent(v any, sk, pub string, tags nostr.Tags) (*nostr.Event, error) {
	content, err := seal(v, sk, pub)
	if err != nil {
		return nil, err
	}
	evt := &nostr.Event{Kind: Kind, CreatedAt: nostr.Now(), Tags: tags, Content: content}
	if err := evt.Sign(sk); err != nil {
		return nil, fmt.Errorf("nostrrpc: sign: %w", err)
	}
	return evt, nil
}

// isResponse reports whether plain is a JSON-RPC response (result or
// error, no method): a server never answers one.
func isResponse(plain []byte) bool {
	var probe struct {
		Method *string         `json:"method"`
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	return json.Unmarshal(plain, &probe) == nil && probe.Method == nil && (probe.Result != nil || probe.Error != nil)
}

// tagValue returns the first value of the named tag.
func tagValue(evt *nostr.Event, name string) string {
	if t := evt.Tags.Find(name); len(t) >= 2 {
		return t[1]
	}
	return ""
}

// errNoResult is a response with neither result nor error.
var errNoResult = errors.New("nostrrpc: response has neither result nor error")
