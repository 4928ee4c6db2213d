package nostrrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip44"
)

// Kind is the JSON-RPC over Nostr event kind (ephemeral).
const Kind = 25910

// JSON-RPC 2.0 error codes used here.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
	CodeServerError    = -32000 // a capability error; data.cap_code says which
	// CodeRateLimited: the caller is a stranger to the agent and the
	// strangers' budget is spent (agentd/strangers); the message starts
	// with "rate-limited:".
	CodeRateLimited = -32029
)

// Request is a JSON-RPC 2.0 request as carried in a kind-25910 event.
type Request struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params,omitempty"`
}

// Response is a JSON-RPC 2.0 response.
type Response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *RPCError       `json:"error,omitempty"`
}

// RPCError is a JSON-RPC error object. A handler may return one to choose
// the code; Data.CapCode carries a CAP code across the wire.
type RPCError struct {
	Code    int           `json:"code"`
	Message string        `json:"message"`
	Data    *RPCErrorData `json:"data,omitempty"`
}

// RPCErrorData is the data member of errors this package sends.
type RPCErrorData struct {
	CapCode string `json:"cap_code,omitempty"`
}

func (e *RPCError) Error() string { return fmt.Sprintf("json-rpc error %d: %s", e.Code, e.Message) }

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

// parseRequest checks a decrypted request. A JSON error is a *RPCError
// with CodeParseError; a malformed request one with CodeInvalidRequest.
func parseRequest(plain []byte) (*Request, error) {
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(plain, &probe); err != nil {
		return nil, &RPCError{Code: CodeParseError, Message: "parse error"}
	}
	var req Request
	if err := json.Unmarshal(plain, &req); err != nil {
		return nil, &RPCError{Code: CodeInvalidRequest, Message: "invalid request"}
	}
	switch {
	case req.JSONRPC != "2.0":
		return &req, &RPCError{Code: CodeInvalidRequest, Message: `invalid request: jsonrpc must be "2.0"`}
	case req.Method == "":
		return &req, &RPCError{Code: CodeInvalidRequest, Message: "invalid request: no method"}
	case len(req.ID) > 0 && !validID(req.ID):
		req.ID = nil
		return &req, &RPCError{Code: CodeInvalidRequest, Message: "invalid request: id must be a string or a number"}
	}
	return &req, nil
}

// validID: JSON-RPC ids are strings or numbers (null is discouraged and
// refused here).
func validID(id json.RawMessage) bool {
	id = bytes.TrimSpace(id)
	if len(id) == 0 {
		return false
	}
	var s string
	var n json.Number
	return json.Unmarshal(id, &s) == nil || (id[0] != '"' && json.Unmarshal(id, &n) == nil)
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
