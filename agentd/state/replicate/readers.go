package replicate

import (
	"context"
	"fmt"
	"slices"

	"github.com/agentnode/agentnode/agentd/state/schema"
	"github.com/agentnode/agentnode/agentd/state/store"
	"github.com/agentnode/agentnode/events"
)

// Directory knows which agents belong to an owner. The replicator asks it
// for the readers of shared state (the owner and every agent of the owner)
// and for who may write an owner's state (the owner and its agents).
//
// Agents should return only agents whose ownership verifies both ways
// (the agent's kind 0 names the owner, the owner's kind 14199 lists the
// agent; events.CheckOwnership): a one-sided claim must not make a key a
// reader or a writer. An unknown owner has no agents (nil, nil). It is
// called for every batch sent and every event received, so cache if it
// is expensive; it must be safe for concurrent use.
type Directory interface {
	Agents(ctx context.Context, owner string) ([]string, error)
}

// DirectoryFunc adapts a function to Directory.
type DirectoryFunc func(ctx context.Context, owner string) ([]string, error)

// Agents calls f.
func (f DirectoryFunc) Agents(ctx context.Context, owner string) ([]string, error) {
	return f(ctx, owner)
}

var _ Directory = DirectoryFunc(nil)

// readers returns who may read a batch of env's document, by visibility:
// private, the owning agent and its owner; shared, the owner and all its
// agents; public, nobody in particular (nil: the batch goes in plaintext).
func readers(ctx context.Context, dir Directory, vis string, env store.Envelope) ([]string, error) {
	var out []string
	switch vis {
	case schema.Public:
		return nil, nil
	case schema.Private:
		out = []string{env.Owner, env.Agent}
	case schema.Shared:
		agents, err := dir.Agents(ctx, env.Owner)
		if err != nil {
			return nil, fmt.Errorf("replicate: agents of %.16s: %w", env.Owner, err)
		}
		out = append([]string{env.Owner}, agents...)
	default:
		return nil, fmt.Errorf("replicate: unknown visibility %q", vis)
	}
	out = slices.DeleteFunc(out, func(pk string) bool { return !events.IsHex64(pk) })
	slices.Sort(out)
	return slices.Compact(out), nil
}

// mayWrite reports whether author may write owner's state: the owner
// itself or one of its agents.
func mayWrite(ctx context.Context, dir Directory, author, owner string) (bool, error) {
	if author == owner {
		return true, nil
	}
	agents, err := dir.Agents(ctx, owner)
	if err != nil {
		return false, fmt.Errorf("replicate: agents of %.16s: %w", owner, err)
	}
	return slices.Contains(agents, author), nil
}
