package agentpg

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"

	"github.com/jackc/pgx/v5"

	"github.com/agentnode/agentnode/agentd"
)

// Files is agentd.AgentFiles in the database: a row per (agent, path).
type Files struct{ db *DB }

var _ agentd.AgentFiles = (*Files)(nil)

// Files returns the agents' files (give it to agentd.Config.Files).
func (db *DB) Files() *Files { return &Files{db: db} }

// Read reads a file (fs.ErrNotExist when there is none).
func (f *Files) Read(ctx context.Context, agent, rel string) ([]byte, error) {
	if err := agentd.CheckRel(rel); err != nil {
		return nil, err
	}
	var data []byte
	err := f.db.pool.QueryRow(ctx, `SELECT data FROM agentpg_agent_files WHERE agent = $1 AND path = $2`, agent, rel).Scan(&data)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("agentpg: %s/%s: %w", agent, rel, fs.ErrNotExist)
	}
	if err != nil {
		return nil, fmt.Errorf("agentpg: read %s/%s: %w", agent, rel, err)
	}
	return data, nil
}

// Write stores a file, replacing it.
func (f *Files) Write(ctx context.Context, agent, rel string, data []byte) error {
	if err := agentd.CheckRel(rel); err != nil {
		return err
	}
	if data == nil {
		data = []byte{}
	}
	_, err := f.db.pool.Exec(ctx, `INSERT INTO agentpg_agent_files (agent, path, data) VALUES ($1, $2, $3)
		ON CONFLICT (agent, path) DO UPDATE SET data = EXCLUDED.data`, agent, rel, data)
	if err != nil {
		return fmt.Errorf("agentpg: write %s/%s: %w", agent, rel, err)
	}
	return nil
}

// Remove removes a file (a missing one is fine).
func (f *Files) Remove(ctx context.Context, agent, rel string) error {
	if err := agentd.CheckRel(rel); err != nil {
		return err
	}
	if _, err := f.db.pool.Exec(ctx, `DELETE FROM agentpg_agent_files WHERE agent = $1 AND path = $2`, agent, rel); err != nil {
		return fmt.Errorf("agentpg: remove %s/%s: %w", agent, rel, err)
	}
	return nil
}

// RemoveAll removes every file of agent.
func (f *Files) RemoveAll(ctx context.Context, agent string) error {
	if _, err := f.db.pool.Exec(ctx, `DELETE FROM agentpg_agent_files WHERE agent = $1`, agent); err != nil {
		return fmt.Errorf("agentpg: remove files of %s: %w", agent, err)
	}
	return nil
}

// Token returns the HTTP API token the instances share (agentd.Config.Token),
// creating a random one (32 bytes, hex) the first time; instances racing
// to create it all get the same one.
func (db *DB) Token(ctx context.Context) (string, error) {
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", fmt.Errorf("agentpg: token: %w", err)
	}
	if _, err := db.pool.Exec(ctx, `INSERT INTO agentpg_settings (key, value) VALUES ('api_token', $1) ON CONFLICT DO NOTHING`,
		hex.EncodeToString(raw)); err != nil {
		return "", fmt.Errorf("agentpg: token: %w", err)
	}
	var tok string
	if err := db.pool.QueryRow(ctx, `SELECT value FROM agentpg_settings WHERE key = 'api_token'`).Scan(&tok); err != nil {
		return "", fmt.Errorf("agentpg: token: %w", err)
	}
	return tok, nil
}
