// Package registry is the node's index of published ACP capability packages
// (kind-30199 events): resolve a capability URI, a name[@version] or an
// naddr to one package, and search packages by text, author, tool and
// permission. It reads events through a tiny Source (the embedded relay
// satisfies it) and keeps an in-memory index of them: Load fills it, Index
// keeps it current (wire it to relay.OnStored). The index checks each
// event's signature and tags and reads the package metadata; Resolve also
// parses the chosen package fully (acp.FromEvent). docs/REGISTRY.md states
// the resolution rules, including which author wins a name two authors
// claim, and the measured costs.
//
// A use:
//
//	reg := registry.New(rel, registry.WithPreferredAuthors(trusted...))
//	if err := reg.Load(ctx); err != nil { ... }
//	defer rel.OnStored(reg.Index)()
//	e, err := reg.Resolve(ctx, "did:nuwa:cap:note", "") // latest by semver
//	hits, err := reg.Search(ctx, "notes web", registry.Filters{Limit: 10})
package registry
