// Package registry is the node's index of published ACP capability packages
// (kind-30199 events): resolve a capability URI, a name[@version] or an
// naddr to one package, and search packages by text, author, tool and
// permission. It reads events through a tiny Source (the embedded relay
// satisfies it) and keeps an in-memory index of them: Load fills it, Index
// keeps it current (wire it to relay.OnStored). The index checks each
// event's signature and tags, that the file is signed by the event's
// author (an unsigned package is not indexed: Nuwa NIP-7), and reads the
// package metadata; Resolve also parses the chosen package fully
// (acp.FromEvent).
//
// Which author wins a name several claim: a trusted author (the call's,
// then WithPreferredAuthors), else the one this node saw first (the
// SeenLog), else ErrAmbiguous — never the earliest created_at, which
// anyone can back-date. docs/REGISTRY.md states the rules, why, and the
// measured costs.
//
// A use:
//
//	seen, err := registry.OpenSeenLog(filepath.Join(dataDir, "registry", "seen.jsonl"))
//	reg := registry.New(rel, registry.WithSeenLog(seen), registry.WithPreferredAuthors(trusted...))
//	defer rel.OnStored(reg.Index)()
//	if err := reg.Load(ctx); err != nil { ... }
//	e, err := reg.Resolve(ctx, "did:nuwa:cap:note", "", ownerPK) // latest by semver
//	hits, err := reg.Search(ctx, "notes web", registry.Filters{Limit: 10})
package registry
