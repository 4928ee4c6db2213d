package agentpg

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agentnode/agentnode/agentd"
	"github.com/agentnode/agentnode/agentd/lease"
	"github.com/agentnode/agentnode/agentd/state"
	"github.com/agentnode/agentnode/agentd/state/schema"
)

// StateRuntime is the daemon's agentd.StateRuntime in Postgres mode: the
// instance's runtime (SQLite, the materialised cache) with every call's
// ops appended to the op log before the call returns. A call for an agent
// this instance does not hold is refused before it runs; one whose ops
// could not be appended under the lease returns an error (the write is not
// acknowledged).
type StateRuntime struct {
	Inner agentd.StateRuntime
	Sync  *StateSync
}

var _ agentd.StateRuntime = (*StateRuntime)(nil)

// CallTool runs a state.* tool, then flushes its ops to the op log.
func (r *StateRuntime) CallTool(ctx context.Context, c state.Caller, name string, args json.RawMessage) (json.RawMessage, error) {
	if err := r.held(c.Agent); err != nil {
		return nil, err
	}
	gen := r.Sync.Dropped(c.Agent)
	out, err := r.Inner.CallTool(ctx, c, name, args)
	if err != nil {
		return nil, err
	}
	return out, r.flush(ctx, c.Agent, gen)
}

// AppendConversation appends to c's conversation log, then flushes.
func (r *StateRuntime) AppendConversation(ctx context.Context, c state.Caller, role, content string) (*state.Document, error) {
	if err := r.held(c.Agent); err != nil {
		return nil, err
	}
	gen := r.Sync.Dropped(c.Agent)
	doc, err := r.Inner.AppendConversation(ctx, c, role, content)
	if err != nil {
		return nil, err
	}
	return doc, r.flush(ctx, c.Agent, gen)
}

// EnsureCore creates c's core models, then flushes. An agent this instance
// does not hold is skipped (nil): the instance that holds it creates them on
// its first state call.
func (r *StateRuntime) EnsureCore(ctx context.Context, c state.Caller) error {
	if r.held(c.Agent) != nil {
		return nil
	}
	gen := r.Sync.Dropped(c.Agent)
	if err := r.Inner.EnsureCore(ctx, c); err != nil {
		return err
	}
	return r.flush(ctx, c.Agent, gen)
}

// Register registers the schema and records it in the database.
func (r *StateRuntime) Register(ctx context.Context, capID string, raw []byte) (*schema.Schema, error) {
	sch, err := r.Inner.Register(ctx, capID, raw)
	if err != nil {
		return nil, err
	}
	return sch, r.Sync.SaveSchema(ctx, sch.URI, capID, raw)
}

func (r *StateRuntime) held(agent string) error {
	if agent == "" {
		return nil
	}
	if _, ok := r.Sync.leases(agent); !ok {
		return fmt.Errorf("%w: agent %s runs on another instance", lease.ErrLost, agent)
	}
	return nil
}

// flush appends the new ops. Ops of agent dropped since gen (by this
// Flush or a concurrent call's, which may have shipped this call's ops)
// make the call fail: its write may not be durable.
func (r *StateRuntime) flush(ctx context.Context, agent string, gen uint64) error {
	if _, err := r.Sync.Flush(ctx); err != nil {
		return fmt.Errorf("agentpg: state not durable: %w", err)
	}
	if agent != "" && r.Sync.Dropped(agent) != gen {
		return fmt.Errorf("%w: agent %s: the write is not durable", lease.ErrLost, agent)
	}
	return nil
}
