package agentd

import (
	"errors"
	"net/http"

	"github.com/agentnode/agentnode/capabilities/llm"
)

// Sentinel errors. Every error the Daemon returns for a caller's mistake
// wraps one of them; over HTTP each travels as a stable code (APIError) and
// errors.Is still matches on the client side.
var (
	// ErrUnknownAgent: no installed agent has that pubkey or name.
	ErrUnknownAgent = errors.New("unknown agent")
	// ErrAmbiguousAgent: several installed agents have that name; use the npub.
	ErrAmbiguousAgent = errors.New("agent name is ambiguous")
	// ErrDefinitionNotFound: the local relay holds no such kind-4199 definition.
	ErrDefinitionNotFound = errors.New("definition not found on the local relay")
	// ErrNudgeNotFound: the local relay holds no such kind-4201 nudge.
	ErrNudgeNotFound = errors.New("nudge not found on the local relay")
	// ErrBadRequest: a malformed reference, pubkey or missing field.
	ErrBadRequest = errors.New("bad request")
	// ErrTooLarge: a request body over the HTTP API's bound (413).
	ErrTooLarge = errors.New("request body too large")
	// ErrOtherDefinition: an upgrade target is not a version of the agent's definition.
	ErrOtherDefinition = errors.New("not a version of the agent's definition")
	// ErrRefused: the relay refused an event the daemon signed.
	ErrRefused = errors.New("the relay refused the event")
	// ErrToolDenied: the agent's nudges take a built-in tool away.
	ErrToolDenied = errors.New("tool not available to this agent")
	// ErrUnknownTool: no built-in tool has that name.
	ErrUnknownTool = errors.New("unknown tool")
	// ErrUnauthorized: an HTTP write without the node's API token.
	ErrUnauthorized = errors.New("missing or wrong API token")
	// ErrCapNotFound: no published capability package matches the reference.
	ErrCapNotFound = errors.New("capability not found")
	// ErrCapNotInstalled: the agent has no such capability installed.
	ErrCapNotInstalled = errors.New("capability not installed on this agent")
	// ErrCapRefused: a package that is unsigned, tampered with or invalid.
	ErrCapRefused = errors.New("capability package refused")
	// ErrCapInstalled: another version of the capability is installed (upgrade it).
	ErrCapInstalled = errors.New("another version of the capability is installed")
	// ErrPermissionsAdded: an upgrade asks for permissions the installed
	// version did not have, and they were not accepted.
	ErrPermissionsAdded = errors.New("the new version asks for more permissions")
	// ErrModelFailed: the chat model failed (provider error, step limit).
	ErrModelFailed = errors.New("the model failed")
	// ErrRevoked: the owner revoked the agent; it answers nothing.
	ErrRevoked = errors.New("the agent is revoked by its owner")
	// ErrFileUnavailable: a file of the definition (a kind-1063 reference)
	// could not be fetched from any of its sources or did not verify.
	ErrFileUnavailable = errors.New("a file of the definition could not be fetched or verified")
	// ErrClosed: the daemon is closed.
	ErrClosed = errors.New("agentd: closed")
	// ErrInternal: anything else; details are logged, not returned over HTTP.
	ErrInternal = errors.New("internal error")
)

// errorCode is how a sentinel travels over HTTP.
type errorCode struct {
	err    error
	code   string
	status int
}

// errorCodes maps sentinels to stable codes and HTTP statuses.
var errorCodes = []errorCode{
	{ErrUnknownAgent, "unknown_agent", http.StatusNotFound},
	{ErrAmbiguousAgent, "ambiguous_agent", http.StatusConflict},
	{ErrDefinitionNotFound, "definition_not_found", http.StatusNotFound},
	{ErrNudgeNotFound, "nudge_not_found", http.StatusNotFound},
	{ErrBadRequest, "bad_request", http.StatusBadRequest},
	{ErrTooLarge, "too_large", http.StatusRequestEntityTooLarge},
	{ErrOtherDefinition, "other_definition", http.StatusConflict},
	{ErrRefused, "refused", http.StatusUnprocessableEntity},
	{ErrToolDenied, "tool_denied", http.StatusForbidden},
	{ErrUnknownTool, "unknown_tool", http.StatusNotFound},
	{ErrUnauthorized, "unauthorized", http.StatusUnauthorized},
	{ErrCapNotFound, "cap_not_found", http.StatusNotFound},
	{ErrCapNotInstalled, "cap_not_installed", http.StatusNotFound},
	{ErrCapRefused, "cap_refused", http.StatusUnprocessableEntity},
	{ErrCapInstalled, "cap_installed", http.StatusConflict},
	{ErrPermissionsAdded, "permissions_added", http.StatusConflict},
	{llm.ErrNoModel, "no_model", http.StatusServiceUnavailable},
	{ErrModelFailed, "model_failed", http.StatusBadGateway},
	{ErrRevoked, "revoked", http.StatusForbidden},
	{ErrFileUnavailable, "file_unavailable", http.StatusUnprocessableEntity},
	{ErrUntrustedSkill, "untrusted_skill", http.StatusConflict},
	{ErrUpgradeRaced, "upgrade_raced", http.StatusConflict},
	{ErrMCPServerNotFound, "mcp_server_not_found", http.StatusNotFound},
	{ErrMCPServerChanged, "mcp_server_changed", http.StatusConflict},
	{ErrUntrustedMCPServer, "untrusted_mcp_server", http.StatusConflict},
	{ErrMCPServerNotApproved, "mcp_server_not_approved", http.StatusForbidden},
	{ErrClosed, "closed", http.StatusServiceUnavailable},
	{ErrInternal, "internal", http.StatusInternalServerError},
}

// codeOf returns the code entry of err (ErrInternal's when none matches).
func codeOf(err error) errorCode {
	for _, c := range errorCodes {
		if errors.Is(err, c.err) {
			return c
		}
	}
	return errorCodes[len(errorCodes)-1]
}

// APIError is an error answered by the daemon's HTTP API. errors.Is
// compares its code with the sentinels', so errors.Is(err, ErrUnknownAgent)
// holds on the client as on the server.
type APIError struct {
	Status  int    `json:"-"`
	Code    string `json:"code"`
	Message string `json:"error"`
}

func (e *APIError) Error() string { return e.Message }

// Is reports whether target is the sentinel of e's code.
func (e *APIError) Is(target error) bool {
	for _, c := range errorCodes {
		if c.code == e.Code {
			return c.err == target
		}
	}
	return false
}
