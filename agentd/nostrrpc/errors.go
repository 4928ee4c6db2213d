package nostrrpc

import (
	"errors"
	"fmt"

	"github.com/agentnode/agentnode/capabilities"
	"github.com/agentnode/agentnode/jsonrpc"
)

var (
	// ErrMethodNotFound is returned by a Handler for a method it does not
	// serve (wrapped: fmt.Errorf("%w: %s", ErrMethodNotFound, m)); the
	// caller gets JSON-RPC -32601 and, on our Client, NOT_FOUND.
	ErrMethodNotFound = jsonrpc.ErrMethodNotFound
	// ErrUndecryptable is content that does not decrypt with the reader's key.
	ErrUndecryptable = errors.New("nostrrpc: content does not decrypt")
	// ErrNoRelay is a call that no relay accepted (subscription or publish).
	ErrNoRelay = errors.New("nostrrpc: no relay accepted the call")
)

// PeerError is the JSON-RPC error a called agent answered with, kept as
// the cause of the *capabilities.Error a Client call returns. It does not
// unwrap to the *jsonrpc.Error: a server that relays the failure chooses
// its own code for it (agentrpc maps the ACP family through), it does not
// answer the peer's error as its own.
type PeerError struct {
	RPC *jsonrpc.Error
}

func (e *PeerError) Error() string { return "peer answered: " + e.RPC.Error() }

// capData is the data member carrying a CAP code.
func capData(code string) map[string]string { return map[string]string{"cap_code": code} }

// capCodeOf is the CAP code in an error's data (as sent, or as decoded
// from the wire), "" if none.
func capCodeOf(e *jsonrpc.Error) string {
	switch d := e.Data.(type) {
	case map[string]string:
		return d["cap_code"]
	case map[string]any:
		s, _ := d["cap_code"].(string)
		return s
	}
	return ""
}

// mapError turns a handler's error that is not a *jsonrpc.Error into the
// JSON-RPC error the peer sees (jsonrpc.Options.MapError): a CAP error is
// -32000 with its code in data.cap_code (INVALID_INPUT: -32602), a timeout
// -32000 TIMEOUT; anything else is internal (nil).
func mapError(err error) *jsonrpc.Error {
	var ce *capabilities.Error
	switch {
	case errors.As(err, &ce):
		code := CodeServerError
		if ce.Code == capabilities.CodeInvalidInput {
			code = jsonrpc.CodeInvalidParams
		}
		return &jsonrpc.Error{Code: code, Message: ce.Message, Data: capData(ce.Code)}
	case capabilities.CodeOf(err) == capabilities.CodeTimeout:
		return &jsonrpc.Error{Code: CodeServerError, Message: "timed out", Data: capData(capabilities.CodeTimeout)}
	}
	return nil
}

// fromRPCError turns a JSON-RPC error from a peer into a CAP error.
func fromRPCError(target, method string, re *jsonrpc.Error) *capabilities.Error {
	code := capabilities.CodeExecutionFailed
	switch cc := capCodeOf(re); {
	case knownCode(cc):
		code = cc
	case re.Code == jsonrpc.CodeMethodNotFound:
		code = capabilities.CodeNotFound
	case re.Code == jsonrpc.CodeInvalidParams:
		code = capabilities.CodeInvalidInput
	}
	return &capabilities.Error{Code: code, Message: fmt.Sprintf("agent %s: %s: %s", short(target), method, re.Message), Err: &PeerError{RPC: re}}
}

func short(pub string) string {
	if len(pub) > 12 {
		return pub[:12]
	}
	return pub
}

// knownCode reports whether c is one of the five CAP codes.
func knownCode(c string) bool {
	switch c {
	case capabilities.CodeNotFound, capabilities.CodeInvalidInput, capabilities.CodePermissionDenied,
		capabilities.CodeExecutionFailed, capabilities.CodeTimeout:
		return true
	}
	return false
}
