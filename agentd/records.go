package agentd

import (
	"context"
	"fmt"
	"sync"
)

// Records is where installed agents are recorded: agents.json in the data
// directory (FileRecords, the embedded default) or a database that several
// instances share (agentd/agentpg.Agents, `serve --postgres`).
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

// FileRecords is Records on agents.json: the registry the Daemon keeps,
// behind a lock.
type FileRecords struct {
	mu  sync.Mutex
	reg *registry
}

var _ Records = (*FileRecords)(nil)

// OpenFileRecords reads path (a missing file is no agents).
func OpenFileRecords(path string) (*FileRecords, error) {
	reg, err := loadRegistry(path)
	if err != nil {
		return nil, err
	}
	return &FileRecords{reg: reg}, nil
}

// List returns every agent, in install order.
func (f *FileRecords) List(context.Context) ([]Agent, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reg.list(), nil
}

// Get returns the agent with pubkey.
func (f *FileRecords) Get(_ context.Context, pubkey string) (Agent, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	a, ok := f.reg.get(pubkey)
	if !ok {
		return Agent{}, fmt.Errorf("%w: %s", ErrUnknownAgent, pubkey)
	}
	return a, nil
}

// Put adds or replaces a and saves the file.
func (f *FileRecords) Put(ctx context.Context, a Agent) error {
	if err := CheckAgent(a); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reg.put(ctx, a)
}

// Remove drops the agent with pubkey and saves the file.
func (f *FileRecords) Remove(ctx context.Context, pubkey string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.reg.index(pubkey) < 0 {
		return fmt.Errorf("%w: %s", ErrUnknownAgent, pubkey)
	}
	return f.reg.remove(ctx, pubkey)
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
