package main

import (
	"context"
	"errors"

	"github.com/agentnode/agentnode/agentd/state"
	"github.com/agentnode/agentnode/capabilities/registry"
)

// registrySchemas is the state runtime's SchemaSource: the capability
// registry over the node's relay (NIP-8: "$id MUST resolve via local cache →
// Registry"). It resolves the capability the URI names — the latest
// version, by the registry's author rule (docs/REGISTRY.md), the caller's
// owner preferred — and answers
// its schema when the package declares exactly that $id. One lookup by
// name per unknown schema: nothing scans the store.
type registrySchemas struct {
	c *ServeCommand // its registry is built after the state runtime opens
}

var _ state.SchemaSource = registrySchemas{}

// FindSchema implements state.SchemaSource.
func (s registrySchemas) FindSchema(ctx context.Context, capName, uri string, trusted ...string) (string, []byte, bool, error) {
	reg := s.c.rt.reg
	if reg == nil {
		return "", nil, false, nil
	}
	e, err := reg.Resolve(ctx, capName, "", trusted...)
	if errors.Is(err, registry.ErrNotFound) || errors.Is(err, registry.ErrAmbiguous) || errors.Is(err, registry.ErrBadRef) {
		return "", nil, false, nil
	}
	if err != nil {
		return "", nil, false, err
	}
	if e.Package == nil || e.Package.SchemaURI() != uri {
		return "", nil, false, nil
	}
	return e.Package.Metadata.ID, e.Package.Schema, true, nil
}
