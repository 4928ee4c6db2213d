package store

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/agentnode/agentnode/agentd/state/crdt"
)

// Envelope actions: what an op-log entry does.
const (
	ActionCreate    = "create"    // the document exists (carries its owner, agent, scope)
	ActionOp        = "op"        // a CRDT op on the document's root or_map
	ActionTombstone = "tombstone" // soft delete: deleted = 1, permanently
	ActionPurge     = "purge"     // hard delete: drops the document and every op stamped before it
)

// Envelope is one op-log entry: a CRDT op (or a create/tombstone/purge
// marker, whose Op carries only an id and a timestamp) with the document it
// belongs to and that document's owner, agent and memory scope. Envelopes
// are what replicas exchange; everything but Seq is the same on every
// replica.
type Envelope struct {
	Seq    int64   `json:"seq,omitempty"` // local log position; not part of the op
	Schema string  `json:"schema"`
	Doc    string  `json:"doc"`
	Scope  string  `json:"scope"`
	Owner  string  `json:"owner"`
	Agent  string  `json:"agent"`
	Action string  `json:"action"`
	Op     crdt.Op `json:"op"`
}

// OpID returns the op's id as "counter@replica".
func (e *Envelope) OpID() string { return e.Op.ID.String() }

// check rejects an envelope that cannot be logged.
func (e *Envelope) check() error {
	switch {
	case e.Schema == "" || e.Doc == "":
		return fmt.Errorf("%w: missing schema or document id", ErrInvalidEnvelope)
	case e.Op.ID.Replica == "" || e.Op.ID.Counter == 0:
		return fmt.Errorf("%w: missing op id", ErrInvalidEnvelope)
	}
	switch e.Action {
	case ActionCreate, ActionOp, ActionTombstone, ActionPurge:
		return nil
	}
	return fmt.Errorf("%w: unknown action %q", ErrInvalidEnvelope, e.Action)
}

// body is the stored form: the envelope without its local sequence.
func (e Envelope) body() ([]byte, error) {
	e.Seq = 0
	return opBody(e)
}

// width returns how many op counters an op uses: an rga insert reserves
// one per unit, an or_map put is as wide as its child.
func width(op *crdt.Op) uint64 {
	for op.Child != nil {
		op = op.Child
	}
	if op.Kind != crdt.OpInsert {
		return 1
	}
	if op.Text != "" {
		return uint64(max(1, utf8.RuneCountInString(op.Text)))
	}
	var vals []json.RawMessage
	if json.Unmarshal(op.Value, &vals) != nil || len(vals) == 0 {
		return 1
	}
	return uint64(len(vals))
}

// Meta is a document's row apart from its content.
type Meta struct {
	Scope      string `json:"scope"`
	Owner      string `json:"owner"`
	Agent      string `json:"agent"`
	Visibility string `json:"visibility"`
	CreatedAt  int64  `json:"created_at"` // unix ms: the earliest op's HLC wall time
	UpdatedAt  int64  `json:"updated_at"` // unix ms: the latest op's HLC wall time
	Deleted    bool   `json:"deleted"`
	Size       int64  `json:"size"`
}

// stamp widens the meta's time range to include an op's wall time.
func (m *Meta) stamp(wall int64) {
	if m.CreatedAt == 0 || wall < m.CreatedAt {
		m.CreatedAt = wall
	}
	m.UpdatedAt = max(m.UpdatedAt, wall)
}

// Doc is a materialised document.
type Doc struct {
	Schema string          `json:"schema"`
	ID     string          `json:"id"`
	Meta                   // row columns
	Value  json.RawMessage `json:"doc"`
}
