package state

import (
	"context"

	"github.com/agentnode/agentnode/agentd/state/schema"
	"github.com/agentnode/agentnode/agentd/state/store"
)

// Delete modes of state.delete.
const (
	DeleteTombstone = "tombstone" // soft: the document is marked deleted (an op replicas apply); history stays
	DeleteHard      = "hard"      // the document and its ops are removed; a purge marker replicates it
)

// Delete is state.delete. mode is "tombstone" (also "" and "soft") or
// "hard". Core models cannot be deleted. Errors: PERMISSION_DENIED,
// NOT_FOUND, INVALID_INPUT (mode).
func (r *Runtime) Delete(ctx context.Context, c Caller, schemaURI, id, mode string) error {
	s, err := r.resolve(ctx, c, schemaURI, VerbDelete)
	if err != nil {
		return err
	}
	if s.Namespace.Kind == schema.KindCore {
		return newError(CodePermissionDenied, "core models cannot be deleted")
	}
	switch mode {
	case DeleteTombstone, "", "soft":
		return r.tombstone(ctx, c, s, id)
	case DeleteHard:
		return r.purge(ctx, c, s, id)
	}
	return newError(CodeInvalidInput, "mode must be %q or %q", DeleteTombstone, DeleteHard)
}

func (r *Runtime) tombstone(ctx context.Context, c Caller, s *schema.Schema, id string) error {
	_, err := r.st.Write(ctx, s, id, func(t *store.Txn) error {
		if err := writable(c, s, t.Exists(), t.Meta()); err != nil {
			return err
		}
		t.Tombstone()
		return nil
	})
	return r.internal(err)
}

func (r *Runtime) purge(ctx context.Context, c Caller, s *schema.Schema, id string) error {
	err := r.st.Purge(ctx, s, id, func(m store.Meta, exists bool) error {
		m.Deleted = false // a tombstoned document may still be purged
		return writable(c, s, exists, m)
	})
	return r.internal(err)
}
