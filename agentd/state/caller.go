package state

import (
	"slices"
	"strings"

	"github.com/agentnode/agentnode/agentd/state/schema"
	"github.com/agentnode/agentnode/agentd/state/store"
)

// Verbs a capability declares in metadata.permissions.require (NIP-7), and
// the storage.large permission (NIP-8: objects over 32 MiB).
const (
	VerbCreate = "state.create"
	VerbUpdate = "state.update"
	VerbQuery  = "state.query" // also covers Get and History
	VerbDelete = "state.delete"
	PermLarge  = "storage.large"
)

// AllVerbs are every state verb: what an operator acting as owner holds.
var AllVerbs = []string{VerbCreate, VerbUpdate, VerbQuery, VerbDelete}

// Caller is who makes a state.* call: the agent, its owner, the capability
// it runs (with the capability's memory scope and granted verbs), and who
// asked for the call when that is someone else (Requester). The agent
// daemon builds it from verified facts; the runtime trusts it.
//
// An empty Agent, or Agent == Owner, is the owner acting directly (the
// operator CLI): it sees every document of its own. An empty Capability is
// the runtime or the owner, not a capability: namespace isolation does not
// restrict it.
type Caller struct {
	Agent      string   // agent pubkey (hex)
	Owner      string   // owner pubkey (hex); required
	Capability string   // capability id (did:nuwa:cap:note@1.0.0) or ""
	Scope      string   // memory_scope (sc:note); "" = any scope on reads
	Verbs      []string // granted verbs (state.create, ...)
	Large      bool     // storage.large granted
	// Requester is who asked for the call when it is neither the agent nor
	// its owner: a stranger calling a tool over kind 25910, a DM
	// correspondent, the source of an agent/message or a delegated task
	// (a sibling agent too); "" = the agent acting for its owner, or the
	// owner. A requester's rights are the owner's decision (Open), see
	// requester.go.
	Requester string
	// Open is what the agent's owner opened to requesters, per schema.
	Open []Grant
}

// CallerFromACP builds a Caller from a capability's metadata: require is
// metadata.permissions.require (state.* verbs and storage.large).
func CallerFromACP(agent, owner, capID, scope string, require []string) Caller {
	c := Caller{Agent: agent, Owner: owner, Capability: capID, Scope: scope}
	for _, r := range require {
		if r == PermLarge {
			c.Large = true
		} else if slices.Contains(AllVerbs, r) {
			c.Verbs = append(c.Verbs, r)
		}
	}
	return c
}

// Can reports whether the caller holds verb.
func (c Caller) Can(verb string) bool { return slices.Contains(c.Verbs, verb) }

// IsOwner reports whether the caller is the owner acting directly.
func (c Caller) IsOwner() bool { return c.Agent == "" || c.Agent == c.Owner }

// Principal is the key the caller acts as: the agent, or the owner.
func (c Caller) Principal() string {
	if c.Agent == "" {
		return c.Owner
	}
	return c.Agent
}

// CanRead is the visibility rule on a document's row: public is readable by
// anyone; shared by every agent of the same owner (and the owner); private
// by the owning agent and its owner. A requester reads public documents
// and its own (and, by canReadIn, what the owner opened).
func (c Caller) CanRead(m store.Meta) bool {
	if c.Requester != "" {
		return m.Visibility == schema.Public || c.requesterOwns(m)
	}
	switch {
	case m.Visibility == schema.Public:
		return true
	case m.Owner != c.Owner:
		return false
	case c.IsOwner() || m.Visibility == schema.Shared:
		return true
	}
	return m.Visibility == schema.Private && m.Agent == c.Agent
}

// CanWrite: readable and of the caller's own owner (a public document of
// another owner is read-only). A requester writes only the documents
// attributed to it.
func (c Caller) CanWrite(m store.Meta) bool {
	if c.Requester != "" {
		return c.requesterOwns(m)
	}
	return c.CanRead(m) && m.Owner == c.Owner
}

// visibilitySQL is CanRead as a predicate over a documents table.
func (c Caller) visibilitySQL() (string, []any) {
	if c.IsOwner() {
		return "(visibility = 'public' OR owner = ?)", []any{c.Owner}
	}
	return "(visibility = 'public' OR (visibility = 'shared' AND owner = ?) OR (visibility = 'private' AND owner = ? AND agent = ?))",
		[]any{c.Owner, c.Owner, c.Agent}
}

// readFilter is what the caller may read in sch's table: live documents it
// can see, in its memory scope (except core models, whose scope is fixed).
// A requester's filter is requesterFilter's.
func (c Caller) readFilter(sch *schema.Schema, withDeleted bool) store.Filter {
	if c.Requester != "" {
		return c.requesterFilter(sch, withDeleted)
	}
	vis, args := c.visibilitySQL()
	f := store.Filter{SQL: vis, Args: args}
	if !withDeleted {
		f.SQL = "deleted = 0 AND " + f.SQL
	}
	if c.Scope != "" && sch.Namespace.Kind != schema.KindCore {
		f.SQL += " AND scope = ?"
		f.Args = append(f.Args, c.Scope)
	}
	return f
}

// inScope reports whether a document's scope is the caller's (for a
// requester: or one of the requester scopes within it).
func (c Caller) inScope(sch *schema.Schema, m store.Meta) bool {
	return c.Scope == "" || sch.Namespace.Kind == schema.KindCore || m.Scope == c.Scope ||
		(c.Requester != "" && strings.HasPrefix(m.Scope, c.Scope+requesterMark))
}
