package agentd

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentnode/agentnode/agentd/internal/atomicfile"
)

// TokenPath is where a node keeps the token its HTTP API asks of writes:
// <data>/agents/api.token (0600). Whoever can read it may install, remove
// and upgrade agents and make them publish lessons.
func TokenPath(dataDir string) string {
	return filepath.Join(dataDir, "agents", "api.token")
}

// ReadToken reads the API token of the node whose data directory is dataDir.
func ReadToken(dataDir string) (string, error) {
	b, err := os.ReadFile(TokenPath(dataDir))
	if err != nil {
		return "", fmt.Errorf("agentd: read API token: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// loadOrCreateToken reads the token at path, creating a random one first
// when there is none.
func loadOrCreateToken(path string) (string, error) {
	b, err := os.ReadFile(path)
	if tok := strings.TrimSpace(string(b)); err == nil && len(tok) >= 32 {
		return tok, nil
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("agentd: read API token: %w", err)
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", fmt.Errorf("agentd: API token: %w", err)
	}
	tok := hex.EncodeToString(raw)
	if err := atomicfile.Write(path, []byte(tok+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("agentd: write API token: %w", err)
	}
	return tok, nil
}
