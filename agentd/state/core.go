package state

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/agentnode/agentnode/agentd/state/schema"
	"github.com/agentnode/agentnode/agentd/state/store"
)

// CoreID is the id of the caller's core model instances: the principal
// (the agent, or the owner acting directly). The spec gives every user one
// instance of each core model; the models are private (the owning agent
// and its owner), so each (owner, agent) pair is a user here, and the owner
// acting directly has its own.
func CoreID(c Caller) string { return c.Principal() }

// EnsureCore creates the caller's ConversationLog, MemoryStore and
// AgentSettings (language "en") unless they exist. Every state.* call runs
// it first, so the models exist from first use; after the first call per
// (owner, principal) it costs a map lookup.
//
// A requester's call ensures the agent's models: the runtime acts for the
// agent here, not for the requester.
func (r *Runtime) EnsureCore(ctx context.Context, c Caller) error {
	c.Requester, c.Open = "", nil
	key := c.Owner + "\x00" + c.Principal()
	if _, done := r.cores.Load(key); done {
		return nil
	}
	for _, uri := range schema.CoreURIs {
		if err := r.ensureOne(ctx, c, uri); err != nil {
			return err
		}
	}
	r.cores.Store(key, struct{}{})
	return nil
}

func (r *Runtime) ensureOne(ctx context.Context, c Caller, uri string) error {
	s, _ := r.reg.Lookup(uri)
	_, err := r.st.Get(ctx, s, CoreID(c), c.readFilter(s, true))
	if err == nil {
		return nil
	}
	if !errors.Is(err, store.ErrNotFound) {
		return err // a failing store is not a missing document
	}
	var obj map[string]any
	if err := json.Unmarshal(schema.CoreInitial(uri), &obj); err != nil {
		return err
	}
	_, err = r.create(ctx, c, s, CoreID(c), obj, CoreScope)
	if err != nil && !isCode(err, CodeConflict) {
		return err
	}
	return nil
}

func isCode(err error, code string) bool {
	e, ok := err.(*Error)
	return ok && e.Code == code
}

// Conversation roles of ConversationLog entries.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// AppendConversation appends an entry (a new id, role, content and the
// current time) to the caller's ConversationLog. It is the runtime's own
// write, so it needs no granted verb.
func (r *Runtime) AppendConversation(ctx context.Context, c Caller, role, content string) (*Document, error) {
	if c.Owner == "" {
		return nil, newError(CodePermissionDenied, "caller has no owner")
	}
	if err := r.EnsureCore(ctx, c); err != nil {
		return nil, err
	}
	entry := map[string]any{"id": newUUID(), "role": role, "content": content,
		"timestamp": r.opts.Now().UTC().Format(time.RFC3339Nano)}
	raw, err := json.Marshal([]map[string]any{{"op": opPush, "path": "/entries", "value": entry}})
	if err != nil {
		return nil, err
	}
	p, err := ParsePatch(raw)
	if err != nil {
		return nil, err
	}
	s, _ := r.reg.Lookup(schema.ConversationLogURI)
	return r.update(ctx, c, s, CoreID(c), p)
}
