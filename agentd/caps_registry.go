package agentd

import (
	"context"
	"errors"

	"github.com/nbd-wtf/go-nostr"

	capregistry "github.com/agentnode/agentnode/capabilities/registry"
)

// RegistryResolver adapts a capabilities/registry to CapResolver (for
// Config.Capabilities): the node's shared, live-indexed registry.
func RegistryResolver(r *capregistry.Registry) CapResolver { return registryResolver{r} }

type registryResolver struct{ r *capregistry.Registry }

func (rr registryResolver) ResolveCapability(ctx context.Context, ref, author string) (*nostr.Event, error) {
	e, err := rr.r.Resolve(ctx, ref, author)
	if err != nil {
		return nil, err
	}
	return e.Event, nil
}

// resolver is Config.Capabilities, else a registry freshly loaded from the
// store (install and upgrade are rare; a fresh load never misses a package
// stored since the last one).
func (d *Daemon) resolver() CapResolver {
	if d.cfg.Capabilities != nil {
		return d.cfg.Capabilities
	}
	return RegistryResolver(capregistry.New(d.store, capregistry.WithLogger(d.log)))
}

// isNotFound reports the registry's not-found.
func isNotFound(err error) bool { return errors.Is(err, capregistry.ErrNotFound) }
