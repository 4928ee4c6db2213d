package agentd

import (
	"context"
	"errors"
	"strings"

	"github.com/nbd-wtf/go-nostr"

	capregistry "github.com/agentnode/agentnode/capabilities/registry"
)

// RegistryResolver adapts a capabilities/registry to CapResolver (for
// Config.Capabilities): the node's shared, live-indexed registry.
func RegistryResolver(r *capregistry.Registry) CapResolver { return registryResolver{r} }

type registryResolver struct{ r *capregistry.Registry }

func (rr registryResolver) ResolveCapability(ctx context.Context, ref, author string, trusted ...string) (*nostr.Event, error) {
	e, err := rr.r.Resolve(ctx, ref, author, trusted...)
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

// trustedAuthors are the authors whose package wins a name for a's
// installs (docs/REGISTRY.md): its owner, then its definition's author
// (DefinitionKey is author:slug).
func trustedAuthors(a Agent) []string {
	out := []string{a.Owner}
	if author, _, ok := strings.Cut(a.DefinitionKey, ":"); ok && author != a.Owner {
		out = append(out, author)
	}
	return out
}

// isNotFound reports the registry's not-found.
func isNotFound(err error) bool { return errors.Is(err, capregistry.ErrNotFound) }
