package directory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// FileRegistrations is Registrations in one JSON file: a single node's
// registrations (proven ones and the spec-form claims) survive a restart.
// Every change rewrites the file (a temporary file renamed over it, so a
// crash leaves the old or the new one); its size is bounded by MaxClaims
// and the number of registered agents. Safe for concurrent use.
type FileRegistrations struct {
	path string
	mu   sync.Mutex // serialises changes and their writes
	mem  *MemoryRegistrations
}

var _ Registrations = (*FileRegistrations)(nil)

// fileRegistrations is the file's content.
type fileRegistrations struct {
	Registered []string      `json:"registered"`
	Claims     []StoredClaim `json:"claims"`
}

// OpenFileRegistrations reads path (absent: empty) into FileRegistrations.
func OpenFileRegistrations(path string) (*FileRegistrations, error) {
	r := &FileRegistrations{path: path, mem: NewMemoryRegistrations()}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return r, nil
	}
	if err != nil {
		return nil, fmt.Errorf("directory: registrations: %w", err)
	}
	var f fileRegistrations
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("directory: registrations %s: %w", path, err)
	}
	for _, a := range f.Registered {
		r.mem.registered[a] = true
	}
	for _, c := range f.Claims {
		r.mem.claims[c.Key] = c
	}
	return r, nil
}

// SetRegistered records agent's registration and saves.
func (r *FileRegistrations) SetRegistered(ctx context.Context, agent string, on bool) error {
	return r.change(ctx, func() error { return r.mem.SetRegistered(ctx, agent, on) })
}

// PutClaim records c and saves.
func (r *FileRegistrations) PutClaim(ctx context.Context, c StoredClaim) error {
	return r.change(ctx, func() error { return r.mem.PutClaim(ctx, c) })
}

// DeleteClaim forgets the claim with key and saves.
func (r *FileRegistrations) DeleteClaim(ctx context.Context, key string) error {
	return r.change(ctx, func() error { return r.mem.DeleteClaim(ctx, key) })
}

// Load returns what was recorded.
func (r *FileRegistrations) Load(ctx context.Context) ([]string, []StoredClaim, error) {
	return r.mem.Load(ctx)
}

// change applies f and writes the file.
func (r *FileRegistrations) change(ctx context.Context, f func() error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := f(); err != nil {
		return err
	}
	reg, claims, err := r.mem.Load(ctx)
	if err != nil {
		return err
	}
	return r.save(fileRegistrations{Registered: reg, Claims: claims})
}

// save writes f atomically (temporary file, fsync, rename).
func (r *FileRegistrations) save(f fileRegistrations) error {
	b, err := json.Marshal(f)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(r.path), 0o700); err != nil {
		return fmt.Errorf("directory: registrations: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(r.path), ".registrations-*")
	if err != nil {
		return fmt.Errorf("directory: registrations: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(b)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), r.path)
	}
	if err != nil {
		return fmt.Errorf("directory: registrations: %w", err)
	}
	return nil
}
