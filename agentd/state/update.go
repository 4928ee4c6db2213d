package state

import (
	"context"

	"github.com/agentnode/agentnode/agentd/state/schema"
	"github.com/agentnode/agentnode/agentd/state/store"
)

// Update is state.update: it applies a patch (RFC 6902 JSON Patch plus
// $inc and $push; see ParsePatch) to the document, validates the result
// against the schema and turns the change into CRDT ops per field. A failed
// "test" refuses the whole patch (CONFLICT); nothing is written on any
// error. Errors: PERMISSION_DENIED, NOT_FOUND, INVALID_INPUT, CONFLICT,
// TOO_LARGE.
func (r *Runtime) Update(ctx context.Context, c Caller, schemaURI, id string, patch []byte) (*Document, error) {
	s, err := r.resolve(ctx, c, schemaURI, VerbUpdate)
	if err != nil {
		return nil, err
	}
	if err := r.checkSize(c, len(patch)); err != nil {
		return nil, err
	}
	p, err := ParsePatch(patch)
	if err != nil {
		return nil, err
	}
	if err := r.EnsureCore(ctx, c); err != nil {
		return nil, err
	}
	return r.update(ctx, c, s, id, p)
}

func (r *Runtime) update(ctx context.Context, c Caller, s *schema.Schema, id string, p *Patch) (*Document, error) {
	doc, err := r.st.Write(ctx, s, id, func(t *store.Txn) error {
		if err := writable(c, s, t.Exists(), t.Meta()); err != nil {
			return err
		}
		cur, err := t.Value()
		if err != nil {
			return err
		}
		next, touched, err := p.Apply(cur)
		if err != nil {
			return err
		}
		if err := checkNext(s, cur, next); err != nil {
			return err
		}
		ops, err := translate(t.Root(), cur, next, touched)
		t.Record(ops...)
		t.Check(r.checker(c, s))
		return err
	})
	if err != nil {
		return nil, r.internal(err)
	}
	return fromStore(doc), nil
}

// writable checks that the document exists, is live, is in the caller's
// scope and may be written by the caller. Documents the caller cannot see
// are NOT_FOUND (their existence is not revealed).
func writable(c Caller, s *schema.Schema, exists bool, m store.Meta) error {
	if !exists || m.Deleted || !c.canReadIn(s, m) || !c.inScope(s, m) {
		return newError(CodeNotFound, "no such document")
	}
	if !c.CanWrite(m) {
		return newError(CodePermissionDenied, "document is read-only for this caller")
	}
	return nil
}

// checkNext refuses a changed id and a result that fails the schema.
func checkNext(s *schema.Schema, cur, next map[string]any) error {
	if !equalJSON(cur["id"], next["id"]) {
		return newError(CodeInvalidInput, "id cannot change")
	}
	if err := s.Validate(next); err != nil {
		return newError(CodeInvalidInput, "%s", err)
	}
	return nil
}
