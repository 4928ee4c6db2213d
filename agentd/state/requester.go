package state

import (
	"strings"

	"github.com/agentnode/agentnode/agentd/state/schema"
	"github.com/agentnode/agentnode/agentd/state/store"
)

// A requester (Caller.Requester: anyone who asks an agent for a call and
// is neither the agent nor its owner) has these rights on the agent's
// state, whatever the transport:
//
//	read   public documents; its own writes; the agent's documents of a
//	       schema the owner opened for reading (never another requester's)
//	write  only in a schema the owner opened for writing: create, update
//	       and delete documents attributed to it (owned by the agent's
//	       owner, in the requester's memory scope, with the schema's
//	       visibility); anything else is PERMISSION_DENIED
//
// The agent (acting for its owner) and the owner keep their full rights.
// The owner sees what requesters wrote; the agent, reading in its memory
// scope, does not: a stranger's text never enters the agent's own memory
// (a capability without a memory scope reads every scope, those too).

// Grant is what an agent's owner opened of one schema to requesters. The
// agent record keeps the owner's grants (agentd.Agent.StateOpen).
type Grant struct {
	Schema string `json:"schema"`          // schema URI
	Read   bool   `json:"read,omitempty"`  // the agent's documents of the schema
	Write  bool   `json:"write,omitempty"` // documents attributed to the requester
}

// requesterMark separates a memory scope from the requester whose
// documents it holds: "sc:note/rq:<pubkey>".
const requesterMark = "/rq:"

// opened is what the owner opened of the schema uri.
func (c Caller) opened(uri string) Grant {
	for _, g := range c.Open {
		if g.Schema == uri {
			return g
		}
	}
	return Grant{Schema: uri}
}

// RequesterScope is the memory scope of the documents the caller's
// requester writes in s ("" for a caller without one).
func (c Caller) RequesterScope(s *schema.Schema) string {
	if c.Requester == "" {
		return ""
	}
	trusted := c
	trusted.Requester = ""
	return scopeOf(trusted, s) + requesterMark + c.Requester
}

// IsRequesterScope reports whether scope holds a requester's documents.
func IsRequesterScope(scope string) bool { return strings.Contains(scope, requesterMark) }

// requesterOwns reports whether the document is attributed to the
// caller's requester (the agent's, in the requester's scope).
func (c Caller) requesterOwns(m store.Meta) bool {
	return m.Owner == c.Owner && m.Agent == c.Principal() && strings.HasSuffix(m.Scope, requesterMark+c.Requester)
}

// openedRead reports whether the owner opened the document to requesters'
// reads: the agent's own (not another requester's) in an opened schema.
func (c Caller) openedRead(s *schema.Schema, m store.Meta) bool {
	return c.opened(s.URI).Read && m.Owner == c.Owner && m.Agent == c.Principal() && !IsRequesterScope(m.Scope)
}

// canReadIn is CanRead with the owner's grants on s.
func (c Caller) canReadIn(s *schema.Schema, m store.Meta) bool {
	return c.CanRead(m) || (c.Requester != "" && c.openedRead(s, m))
}

// requesterFilter is what a requester reads of s: public documents, its
// own, and the agent's where the owner opened reads; within the memory
// scope and the requester scopes inside it (except for core models).
func (c Caller) requesterFilter(s *schema.Schema, withDeleted bool) store.Filter {
	sql := "(visibility = 'public' OR (owner = ? AND agent = ? AND scope = ?)"
	args := []any{c.Owner, c.Principal(), c.RequesterScope(s)}
	if c.opened(s.URI).Read {
		sql += " OR (owner = ? AND agent = ? AND instr(scope, ?) = 0)"
		args = append(args, c.Owner, c.Principal(), requesterMark)
	}
	sql += ")"
	if !withDeleted {
		sql = "deleted = 0 AND " + sql
	}
	if c.Scope != "" && s.Namespace.Kind != schema.KindCore {
		prefix := c.Scope + requesterMark
		sql += " AND (scope = ? OR substr(scope, 1, ?) = ?)"
		args = append(args, c.Scope, len(prefix), prefix)
	}
	return store.Filter{SQL: sql, Args: args}
}

// checkRequester refuses a requester's write to a schema the owner has
// not opened for writing, saying who may.
func (c Caller) checkRequester(s *schema.Schema, verb string) error {
	if c.Requester == "" || verb == VerbQuery || c.opened(s.URI).Write {
		return nil
	}
	return newError(CodePermissionDenied, "%s on %s: only the agent and its owner write this state; the owner may open it to others (agentnode agent state open <agent> %s write)",
		verb, s.URI, s.URI)
}
