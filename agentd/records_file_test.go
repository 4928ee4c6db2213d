package agentd

import (
	"context"
	"fmt"
	"sync"
)

// FileRecords is Records on agents.json (the registry the Daemon keeps,
// behind a lock), for tests: the conformance suite's reference backend and
// a store two daemons share.
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
