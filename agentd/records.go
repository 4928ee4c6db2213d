package agentd

import (
	"context"
	"fmt"
)

// Records is where installed agents are recorded when several instances
// share a database (agentd/agentpg.Agents, `serve --postgres`); without
// one (Config.Records nil) the Daemon keeps agents.json in the data
// directory itself.
// Implementations are safe for concurrent use; a Get or Remove of an
// unknown pubkey wraps ErrUnknownAgent; List is in install order (the
// order of first Put).
type Records interface {
	List(ctx context.Context) ([]Agent, error)
	Get(ctx context.Context, pubkey string) (Agent, error)
	// Put adds a, or replaces the agent with a's pubkey keeping its place.
	Put(ctx context.Context, a Agent) error
	Remove(ctx context.Context, pubkey string) error
}

// CheckAgent refuses a record that could not have been written by the
// daemon (pubkey, owner and definition id must be 64-hex), wrapping
// ErrBadRequest; other Records backends call it before storing.
func CheckAgent(a Agent) error {
	if err := a.check(); err != nil {
		return fmt.Errorf("%w: %v", ErrBadRequest, err)
	}
	return nil
}

// InstallRecords is Records that decides install idempotency itself, for
// every instance sharing the backing (agentd/agentpg.Agents): the check the
// daemon makes against its own copy of the records cannot see an install
// another instance is making at the same moment.
type InstallRecords interface {
	Records
	// Install adds a, a new agent, unless an agent with a's install
	// identity is recorded: installed from a.InstalledFrom (or now running
	// that definition) for a.Owner under a.Name. Then it returns that agent
	// and false, and adds nothing. Two Installs of one identity, through
	// any handles, add one agent.
	Install(ctx context.Context, a Agent) (Agent, bool, error)
}
