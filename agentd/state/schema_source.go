package state

import (
	"context"
	"time"

	"github.com/agentnode/agentnode/agentd/state/schema"
)

// SchemaSource finds a published schema the runtime does not know: NIP-8's
// "$id MUST resolve via local cache → Registry → DID resolver" (agentnode
// has no DID resolver). capName is the capability the URI names (the
// cap namespace's <cap_id>, or the <name> of the ACP form
// did:nuwa:state:<name>#<ver>, which by the spec's convention is the
// declaring capability's); trusted are authors to prefer (the caller's
// owner). The source answers the declaring package's id
// (did:nuwa:cap:<name>@<ver>) and the schema's JSON, and ok false when no
// package it trusts declares uri. Implementations bound their own work.
type SchemaSource interface {
	FindSchema(ctx context.Context, capName, uri string, trusted ...string) (capID string, raw []byte, ok bool, err error)
}

// sourceTimeout bounds one SchemaSource lookup.
const sourceTimeout = 5 * time.Second

// fromSource registers the schema uri names from Options.Schemas, when one
// declares it; ok reports whether it is registered now. A failing source
// is logged and treated as not found. Only an agent or its owner resolves
// (c has no Requester): a registered schema holds its URI node-wide, so a
// stranger's call must not choose which published package that is.
func (r *Runtime) fromSource(ctx context.Context, c Caller, uri string) (*schema.Schema, bool) {
	capName, ok := sourceName(uri)
	if r.opts.Schemas == nil || !ok || c.Requester != "" {
		return nil, false
	}
	ctx, cancel := context.WithTimeout(ctx, sourceTimeout)
	defer cancel()
	capID, raw, found, err := r.opts.Schemas.FindSchema(ctx, capName, uri, c.Owner)
	if err != nil {
		r.opts.Logger.Warn("state: schema source failed", "schema", uri, "err", err)
		return nil, false
	}
	if !found {
		return nil, false
	}
	if _, err := r.Register(ctx, capID, raw); err != nil {
		r.opts.Logger.Warn("state: published schema not registered", "schema", uri, "capability", capID, "err", err)
		return nil, false
	}
	return r.reg.Lookup(uri)
}

// sourceName is the capability a cap-namespace or ACP-form URI names.
func sourceName(uri string) (string, bool) {
	info, err := schema.ParseURI(uri)
	if err != nil || info.Namespace.Kind != schema.KindCap {
		return "", false
	}
	if info.Declared {
		return info.Name, true
	}
	return info.Namespace.Name, true
}
