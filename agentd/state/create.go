package state

import (
	"context"
	"crypto/rand"
	"fmt"
	"unicode"

	"github.com/agentnode/agentnode/agentd/state/schema"
	"github.com/agentnode/agentnode/agentd/state/store"
)

// DefaultScope is the memory scope of a caller that names none.
const DefaultScope = "sc:default"

// CoreScope is the memory scope of the core models.
const CoreScope = "sc:core"

// maxIDLen bounds document ids.
const maxIDLen = 256

// Create is state.create: it validates object against the schema and
// stores it as a new document owned by the caller. The id is the object's
// "id" if it has one, else a new UUID (written into the object when the
// schema declares an id property). Errors: PERMISSION_DENIED, NOT_FOUND
// (schema), INVALID_INPUT, CONFLICT (the id exists), TOO_LARGE.
func (r *Runtime) Create(ctx context.Context, c Caller, schemaURI string, object []byte) (*Document, error) {
	s, err := r.resolve(ctx, c, schemaURI, VerbCreate)
	if err != nil {
		return nil, err
	}
	if s.Namespace.Kind == schema.KindCore {
		return nil, newError(CodeInvalidInput, "core models are created by the runtime; update them instead")
	}
	if err := r.checkSize(c, len(object)); err != nil {
		return nil, err
	}
	obj, id, err := prepareObject(s, object)
	if err != nil {
		return nil, err
	}
	if err := r.EnsureCore(ctx, c); err != nil {
		return nil, err
	}
	return r.create(ctx, c, s, id, obj, scopeOf(c, s))
}

// create writes a new document (also used for the core models).
func (r *Runtime) create(ctx context.Context, c Caller, s *schema.Schema, id string, obj map[string]any, scope string) (*Document, error) {
	doc, err := r.st.Write(ctx, s, id, func(t *store.Txn) error {
		if t.Exists() {
			return newError(CodeConflict, "document %q already exists", id)
		}
		t.Create(store.Meta{Scope: scope, Owner: c.Owner, Agent: c.Principal()})
		cur, err := t.Value()
		if err != nil {
			return err
		}
		all := map[string]bool{}
		for k := range obj {
			all[k] = true
		}
		ops, err := translate(t.Root(), cur, obj, all)
		t.Record(ops...)
		t.Check(r.checker(c, s))
		return err
	})
	if err != nil {
		return nil, r.internal(err)
	}
	return fromStore(doc), nil
}

// prepareObject decodes, ids and validates a new object.
func prepareObject(s *schema.Schema, raw []byte) (map[string]any, string, error) {
	v, err := decodeValue(raw)
	obj, ok := v.(map[string]any)
	if err != nil || !ok {
		return nil, "", newError(CodeInvalidInput, "object must be a JSON object")
	}
	id, err := objectID(s, obj)
	if err != nil {
		return nil, "", err
	}
	if err := s.Validate(obj); err != nil {
		return nil, "", newError(CodeInvalidInput, "%s", err)
	}
	return obj, id, nil
}

// objectID takes the object's id or makes one. The object keeps an "id"
// field only if the schema declares one; otherwise "id" names the document
// and is taken out of the object.
func objectID(s *schema.Schema, obj map[string]any) (string, error) {
	raw, has := obj["id"]
	if has && !s.HasProp("id") {
		delete(obj, "id")
	}
	if !has {
		id := newUUID()
		if s.HasProp("id") {
			obj["id"] = id
		}
		return id, nil
	}
	id, ok := raw.(string)
	if !ok || !validID(id) {
		return "", newError(CodeInvalidInput, "id must be a non-empty string of at most %d printable characters", maxIDLen)
	}
	return id, nil
}

func validID(id string) bool {
	if id == "" || len(id) > maxIDLen {
		return false
	}
	for _, r := range id {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// newUUID returns a random (version 4) UUID.
func newUUID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// scopeOf is the memory scope new documents of s get.
func scopeOf(c Caller, s *schema.Schema) string {
	switch {
	case s.Namespace.Kind == schema.KindCore:
		return CoreScope
	case c.Requester != "":
		return c.RequesterScope(s)
	case c.Scope == "":
		return DefaultScope
	}
	return c.Scope
}

// checkSize refuses input over the limit without storage.large.
func (r *Runtime) checkSize(c Caller, n int) error {
	if !c.Large && int64(n) > r.opts.MaxObjectSize {
		return newError(CodeTooLarge, "%d bytes exceed %d without %s", n, r.opts.MaxObjectSize, PermLarge)
	}
	return nil
}

// checker validates the materialised result and its size before commit.
func (r *Runtime) checker(c Caller, s *schema.Schema) func(map[string]any, []byte) error {
	return func(v map[string]any, raw []byte) error {
		if err := r.checkSize(c, len(raw)); err != nil {
			return err
		}
		if err := s.Validate(v); err != nil {
			return newError(CodeInvalidInput, "%s", err)
		}
		return nil
	}
}
