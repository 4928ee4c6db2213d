package consent

import "context"

// Backend is where a Consent keeps approvals and revocations: a SQLite
// file (the default, Config.Path) or a database several instances share
// (agentd/agentpg, `serve --postgres`, Config.Backend). Consent holds the
// rules; a Backend stores, and makes Update atomic against every other
// Update of the same approval, also from another process.
// Implementations are safe for concurrent use.
type Backend interface {
	// Insert records a new approval.
	Insert(ctx context.Context, a Approval) error
	// Get returns approval id, or an error wrapping ErrNotFound.
	Get(ctx context.Context, id string) (Approval, error)
	// List returns the approvals with status ("" all), oldest first, in
	// asking order within one millisecond.
	List(ctx context.Context, status Status) ([]Approval, error)
	// Update reads approval id, lets change edit it and writes it back in
	// one transaction; an error from change aborts and is returned as is.
	Update(ctx context.Context, id string, change func(*Approval) error) (Approval, error)
	// PutRevoked records r, replacing the agent's earlier revocation.
	PutRevoked(ctx context.Context, r Revocation) error
	// DeleteRevoked lifts agent's revocation; it reports whether there was one.
	DeleteRevoked(ctx context.Context, agent string) (bool, error)
	// Revoked returns the revocations, oldest first (then by agent).
	Revoked(ctx context.Context) ([]Revocation, error)
	// Close releases the backing (for a shared one: this handle only).
	Close() error
}
