package agentd

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentnode/agentnode/agentd/internal/atomicfile"
)

// AgentFiles holds each agent's small files (caps.json and the cached
// capability packages): a directory per agent under DataDir/agents (the
// default, DirFiles) or a database several instances share
// (agentd/agentpg.Files, Config.Files). rel is a slash-separated path
// inside the agent's space without "..". Read of a missing file wraps
// fs.ErrNotExist; Remove of one is not an error. Writes are atomic and
// durable when they return. Implementations are safe for concurrent use.
type AgentFiles interface {
	Read(ctx context.Context, agent, rel string) ([]byte, error)
	Write(ctx context.Context, agent, rel string, data []byte) error
	Remove(ctx context.Context, agent, rel string) error
	// RemoveAll drops every file of agent.
	RemoveAll(ctx context.Context, agent string) error
}

// DirFiles is AgentFiles on a directory: <dir>/<agent>/<rel>, files 0600
// in 0700 directories.
type DirFiles struct{ Dir string }

var _ AgentFiles = DirFiles{}

// CheckRel refuses a path that could leave the agent's space.
func CheckRel(rel string) error {
	if rel == "" || strings.Contains(rel, "..") || strings.HasPrefix(rel, "/") {
		return fmt.Errorf("agentd: bad agent file path %q", rel)
	}
	return nil
}

func (f DirFiles) path(agent, rel string) (string, error) {
	if err := CheckRel(rel); err != nil {
		return "", err
	}
	if err := CheckRel(agent); err != nil || strings.Contains(agent, "/") {
		return "", fmt.Errorf("agentd: bad agent %q", agent)
	}
	return filepath.Join(f.Dir, agent, filepath.FromSlash(rel)), nil
}

// Read reads a file.
func (f DirFiles) Read(_ context.Context, agent, rel string) ([]byte, error) {
	p, err := f.path(agent, rel)
	if err != nil {
		return nil, err
	}
	return os.ReadFile(p)
}

// Write writes a file atomically (0600), creating its directories (0700).
func (f DirFiles) Write(_ context.Context, agent, rel string, data []byte) error {
	p, err := f.path(agent, rel)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	return atomicfile.Write(p, data, 0o600)
}

// Remove removes a file (a missing one is fine).
func (f DirFiles) Remove(_ context.Context, agent, rel string) error {
	p, err := f.path(agent, rel)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// RemoveAll removes the agent's directory.
func (f DirFiles) RemoveAll(_ context.Context, agent string) error {
	if _, err := f.path(agent, "x"); err != nil {
		return err
	}
	return os.RemoveAll(filepath.Join(f.Dir, agent))
}
