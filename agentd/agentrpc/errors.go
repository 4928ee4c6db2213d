package agentrpc

import (
	"errors"
	"strings"

	"github.com/agentnode/agentnode/agentd/consent"
	"github.com/agentnode/agentnode/agentd/directory"
	"github.com/agentnode/agentnode/agentd/nostrrpc"
	"github.com/agentnode/agentnode/agentd/tasks"
	"github.com/agentnode/agentnode/capabilities"
	"github.com/agentnode/agentnode/jsonrpc"
)

// The Agent Context Protocol's -32001 family (docs/AGENT-CONTEXT-PROTOCOL.md#errors).
// The standard JSON-RPC codes (-32700, -32600, -32601, -32602, -32603) keep
// their meaning: -32602 is params that do not decode into the method's
// shape; -32001 is a well-formed payload the method cannot accept.
const (
	CodeInvalidPayload   = -32001 // a field is missing or has a value the method refuses
	CodeAgentNotFound    = -32002 // no such agent (not local, not in the directory, no remote route)
	CodeAgentUnavailable = -32003 // no available agent matches, or the agent does not answer in time
	CodeConsentRequired  = -32004 // the owner's approval is needed (pending) or was denied; data says which
	CodeAgentRevoked     = -32005 // the agent is revoked by its owner: it answers nothing
	CodeTaskNotFound     = -32006 // no such task
	CodeDeadlinePassed   = -32007 // the task's deadline has passed
	CodeModelUnavailable = -32008 // sampling/createMessage on a node without a model
	CodeProofRejected    = -32009 // a registration proof does not prove key possession
	CodeAgentFailed      = -32010 // the agent (or the remote node) failed to carry out the request
)

// Codes is the Agent Context Protocol's table of error codes besides the
// standard ones (jsonrpc.StandardCodes), as docs/JSONRPC.md shows it.
var Codes = []jsonrpc.CodeDoc{
	{Code: CodeInvalidPayload, Name: "invalid payload", Meaning: "the params decode but a field is missing or refused (the spec's §3.5)"},
	{Code: CodeAgentNotFound, Name: "agent not found", Meaning: "not local, not in the directory, no route"},
	{Code: CodeAgentUnavailable, Name: "agent unavailable", Meaning: "no available agent matches, or the agent does not answer in time"},
	{Code: CodeConsentRequired, Name: "consent required", Meaning: "the owner's approval is pending, denied, or for another operation"},
	{Code: CodeAgentRevoked, Name: "agent revoked", Meaning: "the agent is revoked by its owner: it answers nothing"},
	{Code: CodeTaskNotFound, Name: "task not found", Meaning: "no such task"},
	{Code: CodeDeadlinePassed, Name: "deadline passed", Meaning: "the task's deadline has passed"},
	{Code: CodeModelUnavailable, Name: "model unavailable", Meaning: "sampling/createMessage on a node without a model"},
	{Code: CodeProofRejected, Name: "proof rejected", Meaning: "a registration proof does not prove key possession"},
	{Code: CodeAgentFailed, Name: "agent failed", Meaning: "the agent (or the remote node) failed to carry out the request"},
}

// ConsentData is the data of a -32004 error.
type ConsentData struct {
	ApprovalID string `json:"approvalId,omitempty"`
	Status     string `json:"status"` // pending, denied, mismatch, unknown
	Op         string `json:"op,omitempty"`
}

func invalidPayload(format string, args ...any) *jsonrpc.Error {
	return jsonrpc.Errorf(CodeInvalidPayload, "invalid payload: "+format, args...)
}

func agentNotFound(id string) *jsonrpc.Error {
	return &jsonrpc.Error{Code: CodeAgentNotFound, Message: "agent not found", Data: map[string]string{"agentId": id}}
}

func agentUnavailable(why string) *jsonrpc.Error {
	return &jsonrpc.Error{Code: CodeAgentUnavailable, Message: "agent unavailable: " + why}
}

func agentRevoked(id string) *jsonrpc.Error {
	return &jsonrpc.Error{Code: CodeAgentRevoked, Message: "agent revoked by its owner", Data: map[string]string{"agentId": id}}
}

// mapError turns the domain errors behind a handler's failure into the
// code the caller sees (jsonrpc.Options.MapError). Messages are ours, never
// the internal error's text.
func mapError(err error) *jsonrpc.Error {
	if e := consentError(err); e != nil {
		return e
	}
	if e := remoteError(err); e != nil {
		return e
	}
	switch {
	case errors.Is(err, tasks.ErrNotFound):
		return &jsonrpc.Error{Code: CodeTaskNotFound, Message: "task not found"}
	case errors.Is(err, tasks.ErrDeadlinePassed):
		return &jsonrpc.Error{Code: CodeDeadlinePassed, Message: "deadline passed"}
	case errors.Is(err, tasks.ErrExists):
		return invalidPayload("task id already used")
	case errors.Is(err, directory.ErrUnknownAgent):
		return &jsonrpc.Error{Code: CodeAgentNotFound, Message: "agent not found"}
	case errors.Is(err, directory.ErrBadEvaluation):
		return invalidPayload("%s", err.Error())
	case errors.Is(err, directory.ErrBadClaim), errors.Is(err, directory.ErrProvenAgent), errors.Is(err, directory.ErrTooManyClaims):
		return invalidPayload("%s", strings.TrimPrefix(err.Error(), "directory: "))
	}
	var pe *directory.ProofError
	if errors.As(err, &pe) {
		return &jsonrpc.Error{Code: CodeProofRejected, Message: "proof rejected: " + pe.Error()}
	}
	return nil
}

func consentError(err error) *jsonrpc.Error {
	var (
		p *consent.PendingError
		d *consent.DeniedError
	)
	switch {
	case errors.As(err, &p):
		return &jsonrpc.Error{Code: CodeConsentRequired, Message: "consent required: the owner must approve " + p.Approval.Op,
			Data: ConsentData{ApprovalID: p.Approval.ID, Status: "pending", Op: p.Approval.Op}}
	case errors.As(err, &d):
		return &jsonrpc.Error{Code: CodeConsentRequired, Message: "consent denied by the owner",
			Data: ConsentData{ApprovalID: d.Approval.ID, Status: "denied", Op: d.Approval.Op}}
	case errors.Is(err, consent.ErrMismatch):
		return &jsonrpc.Error{Code: CodeConsentRequired, Message: "consent required: the approval given is for another operation", Data: ConsentData{Status: "mismatch"}}
	case errors.Is(err, consent.ErrNotFound):
		return &jsonrpc.Error{Code: CodeConsentRequired, Message: "consent required: no such approval", Data: ConsentData{Status: "unknown"}}
	case errors.Is(err, consent.ErrRevoked):
		return &jsonrpc.Error{Code: CodeAgentRevoked, Message: "agent revoked by its owner"}
	}
	return nil
}

// remoteError maps a failed call to a remote agent: an ACP code the peer
// chose crosses over as is; a timeout is -32003; anything else -32010.
func remoteError(err error) *jsonrpc.Error {
	var pe *nostrrpc.PeerError
	if errors.As(err, &pe) && pe.RPC.Code <= CodeInvalidPayload && pe.RPC.Code >= CodeAgentFailed {
		return &jsonrpc.Error{Code: pe.RPC.Code, Message: "remote: " + pe.RPC.Message}
	}
	var ce *capabilities.Error
	if !errors.As(err, &ce) {
		return nil
	}
	switch ce.Code {
	case capabilities.CodeTimeout:
		return agentUnavailable("no reply in time")
	case capabilities.CodeNotFound:
		return agentNotFound("")
	}
	return &jsonrpc.Error{Code: CodeAgentFailed, Message: "agent failed: " + ce.Message}
}

// toRPCError is the error a remote caller gets from ServeRPC: the same code
// as over HTTP.
func toRPCError(err error) error {
	var je *jsonrpc.Error
	if errors.As(err, &je) {
		return je
	}
	if je = mapError(err); je != nil {
		return je
	}
	return err // nostrrpc answers internal error
}
