package state

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/agentnode/agentnode/agentd/state/asmql"
	"github.com/agentnode/agentnode/agentd/state/crdt"
	"github.com/agentnode/agentnode/agentd/state/schema"
	"github.com/agentnode/agentnode/agentd/state/store"
)

// DefaultMaxObjectSize is NIP-8's limit: larger objects need storage.large.
const DefaultMaxObjectSize = 32 << 20

// Options configure a Runtime.
type Options struct {
	Dir           string           // data directory (state.db lives here)
	MaxObjectSize int64            // bytes; 0 = DefaultMaxObjectSize
	Limits        asmql.Limits     // ASM-QL cost limits (zero fields: asmql's defaults)
	Now           func() time.Time // wall clock (HLC, timestamps); nil = time.Now
	Replica       crdt.ReplicaID   // "" = the store's persistent id
	CacheSize     int              // documents kept in memory; 0 = store default
	Logger        *slog.Logger     // nil = slog.Default()
	// Schemas resolves a schema URI the runtime does not know to the
	// published package that declares it (nil: unknown schemas are
	// NOT_FOUND). A schema found is registered as an installed one is.
	Schemas SchemaSource
}

// Runtime executes the state.* tools over the store. It is safe for
// concurrent use. Open starts nothing in the background; the Lifecycle is
// a separate task.
type Runtime struct {
	opts  Options
	reg   *schema.Registry
	st    *store.Store
	cores sync.Map // owner "\x00" principal -> struct{}: core models exist
}

// Open opens the store in opts.Dir, registers the core models and every
// schema registered before, and creates their tables.
func Open(ctx context.Context, opts Options) (*Runtime, error) {
	if opts.MaxObjectSize <= 0 {
		opts.MaxObjectSize = DefaultMaxObjectSize
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	reg := schema.NewRegistry()
	st, err := store.Open(ctx, store.Config{Dir: opts.Dir, Schemas: reg, Now: opts.Now, Replica: opts.Replica, CacheSize: opts.CacheSize})
	if err != nil {
		return nil, err
	}
	r := &Runtime{opts: opts, reg: reg, st: st}
	if err := r.loadSchemas(ctx); err != nil {
		st.Close(ctx)
		return nil, err
	}
	return r, nil
}

// loadSchemas prepares the core tables and re-registers persisted schemas.
func (r *Runtime) loadSchemas(ctx context.Context) error {
	for _, s := range r.reg.All() {
		if err := r.st.Prepare(ctx, s); err != nil {
			return err
		}
	}
	rows, err := r.st.Schemas(ctx)
	if err != nil {
		return err
	}
	for _, row := range rows {
		s, err := r.reg.Register(row.Raw, row.Capability)
		if err != nil { // e.g. refused by a stricter parser: its data stays, unreachable until registered again
			r.opts.Logger.Warn("state: persisted schema not loaded", "uri", row.URI, "err", err)
			continue
		}
		if err := r.st.Prepare(ctx, s); err != nil {
			return err
		}
	}
	return nil
}

// Close closes the store.
func (r *Runtime) Close(ctx context.Context) error { return r.st.Close(ctx) }

// Store returns the underlying store (replication: OpsSince, ApplyRemote).
func (r *Runtime) Store() *store.Store { return r.st }

// Schemas returns the schema registry.
func (r *Runtime) Schemas() *schema.Registry { return r.reg }

// Register adds a schema declared by capability capID (its package's
// schema section), creates its tables and indexes, and persists it for the
// next Open. Errors: INVALID_INPUT for a bad schema, CONFLICT for a URI
// taken by another capability or registered with other content.
func (r *Runtime) Register(ctx context.Context, capID string, raw []byte) (*schema.Schema, error) {
	s, err := r.reg.Register(raw, capID)
	if err != nil {
		return nil, coded(err)
	}
	if err := r.st.Prepare(ctx, s); err != nil {
		return nil, r.internal(err)
	}
	if err := r.st.SaveSchema(ctx, s); err != nil {
		return nil, r.internal(err)
	}
	return s, nil
}

// resolve checks the caller, the verb, the schema (a published one found
// through Options.Schemas when it is unknown here) and the namespace.
func (r *Runtime) resolve(ctx context.Context, c Caller, uri, verb string) (*schema.Schema, error) {
	if c.Owner == "" {
		return nil, newError(CodePermissionDenied, "caller has no owner")
	}
	if !c.Can(verb) {
		return nil, newError(CodePermissionDenied, "%s not granted (declare it in metadata.permissions.require)", verb)
	}
	s, ok := r.reg.Lookup(uri)
	if !ok {
		s, ok = r.fromSource(ctx, c, uri)
	}
	if !ok {
		return nil, newError(CodeNotFound, "unknown schema %q", uri)
	}
	if err := checkNamespace(c, s); err != nil {
		return nil, err
	}
	if err := c.checkRequester(s, verb); err != nil {
		return nil, err
	}
	return s, nil
}

// checkNamespace enforces table isolation between capabilities: a
// capability reaches only its own cap namespace (plus core, app and user).
func checkNamespace(c Caller, s *schema.Schema) error {
	if s.Namespace.Kind != schema.KindCap || c.Capability == "" {
		return nil
	}
	if name := schema.CapName(c.Capability); name != s.Namespace.Name {
		return newError(CodePermissionDenied, "capability %q may not access namespace %s", name, s.Namespace)
	}
	return nil
}

// internal logs a store failure and returns the coded error peers see.
func (r *Runtime) internal(err error) error {
	ce := coded(err)
	var e *Error
	if errors.As(ce, &e) && e.Code == CodeInternal {
		r.opts.Logger.Error("state store failure", "err", err)
	}
	return ce
}
