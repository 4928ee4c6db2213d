package consent

import "strings"

// Operations the node asks consent for (Policy.Require names them; any
// other string, e.g. "method:tools/call", is an operation an owner marks).
const (
	// OpDelegateRemote: delegating a task to an agent on another node.
	OpDelegateRemote = "delegate.remote"
	// OpMessageRemote: sending agent/message to an agent on another node.
	OpMessageRemote = "message.remote"
	// OpPrivateState: exposing private state (the task queue's payloads and
	// results, agent://tasks) to a caller.
	OpPrivateState = "private.state"
)

// MethodOp is the operation name an owner marks to gate a JSON-RPC method.
func MethodOp(method string) string { return "method:" + method }

// Policy says which operations need the owner's approval.
type Policy struct {
	// Require lists the operations that need approval. nil: DefaultPolicy's.
	Require []string `json:"require" yaml:"require"`
}

// DefaultPolicy asks approval for remote delegation only.
var DefaultPolicy = Policy{Require: []string{OpDelegateRemote}}

// Requires reports whether op needs approval under p.
func (p Policy) Requires(op string) bool {
	for _, r := range p.Require {
		if strings.EqualFold(strings.TrimSpace(r), op) {
			return true
		}
	}
	return false
}
