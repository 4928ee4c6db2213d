package nostrrpc

import (
	"errors"
	"fmt"

	"github.com/agentnode/agentnode/capabilities"
)

var (
	// ErrMethodNotFound is returned by a Handler for a method it does not
	// serve (wrapped: fmt.Errorf("%w: %s", ErrMethodNotFound, m)); the
	// caller gets JSON-RPC -32601 and, on our Client, NOT_FOUND.
	ErrMethodNotFound = errors.New("nostrrpc: method not found")
	// ErrUndecryptable is content that does not decrypt with the reader's key.
	ErrUndecryptable = errors.New("nostrrpc: content does not decrypt")
	// ErrNoRelay is a call that no relay accepted (subscription or publish).
	ErrNoRelay = errors.New("nostrrpc: no relay accepted the call")

	errHandlerPanic = errors.New("nostrrpc: handler panicked")
)

// toRPCError turns a handler's error into the JSON-RPC error the peer
// sees. Only coded messages cross the wire; other errors are "internal error".
func toRPCError(err error) *RPCError {
	var (
		re *RPCError
		ce *capabilities.Error
	)
	switch {
	case errors.As(err, &re):
		return re
	case errors.Is(err, ErrMethodNotFound):
		return &RPCError{Code: CodeMethodNotFound, Message: "method not found"}
	case errors.As(err, &ce):
		code := CodeServerError
		if ce.Code == capabilities.CodeInvalidInput {
			code = CodeInvalidParams
		}
		return &RPCError{Code: code, Message: ce.Message, Data: &RPCErrorData{CapCode: ce.Code}}
	case capabilities.CodeOf(err) == capabilities.CodeTimeout:
		return &RPCError{Code: CodeServerError, Message: "timed out", Data: &RPCErrorData{CapCode: capabilities.CodeTimeout}}
	}
	return &RPCError{Code: CodeInternalError, Message: "internal error"}
}

// fromRPCError turns a JSON-RPC error from a peer into a CAP error.
func fromRPCError(target, method string, re *RPCError) *capabilities.Error {
	code := capabilities.CodeExecutionFailed
	switch {
	case re.Data != nil && knownCode(re.Data.CapCode):
		code = re.Data.CapCode
	case re.Code == CodeMethodNotFound:
		code = capabilities.CodeNotFound
	case re.Code == CodeInvalidParams:
		code = capabilities.CodeInvalidInput
	}
	return &capabilities.Error{Code: code, Message: fmt.Sprintf("agent %s: %s: %s", short(target), method, re.Message), Err: re}
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
