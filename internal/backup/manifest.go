package backup

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// ManifestFile is the name of a backup's manifest, written last.
const ManifestFile = "backup.json"

var (
	// ErrNoManifest: the directory is not a complete backup (no backup.json:
	// never made, or interrupted).
	ErrNoManifest = errors.New("not a complete backup (no " + ManifestFile + ")")
	// ErrCorrupt: a file of the backup is missing or differs from the manifest.
	ErrCorrupt = errors.New("backup does not match its manifest")
)

// Manifest describes a backup.
type Manifest struct {
	Format    int       `json:"format"`    // 1
	Version   string    `json:"agentnode"` // the version that made it
	CreatedAt time.Time `json:"created_at"`
	Files     []File    `json:"files"`
}

// File is one file of a backup, by its slash-separated path in it.
type File struct {
	Path   string `json:"path"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// Bytes is the backup's total size.
func (m *Manifest) Bytes() int64 {
	var n int64
	for _, f := range m.Files {
		n += f.Bytes
	}
	return n
}

// describe hashes the file at dir/rel.
func describe(dir, rel string) (File, error) {
	f, err := os.Open(filepath.Join(dir, filepath.FromSlash(rel)))
	if err != nil {
		return File{}, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return File{}, err
	}
	return File{Path: rel, Bytes: n, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

// writeManifest writes m as dir/backup.json, synced.
func writeManifest(dir string, m *Manifest) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return writeSynced(filepath.Join(dir, ManifestFile), b)
}

// readManifest reads dir/backup.json.
func readManifest(dir string) (*Manifest, error) {
	b, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", dir, ErrNoManifest)
	}
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil || m.Format != 1 {
		return nil, fmt.Errorf("%s: %w: unreadable manifest", dir, ErrCorrupt)
	}
	return &m, nil
}

// Verify checks every file of the backup in dir against its manifest.
func Verify(dir string) (*Manifest, error) {
	m, err := readManifest(dir)
	if err != nil {
		return nil, err
	}
	for _, want := range m.Files {
		if !filepath.IsLocal(filepath.FromSlash(want.Path)) {
			return nil, fmt.Errorf("%w: path %q leaves the backup", ErrCorrupt, want.Path)
		}
		got, err := describe(dir, want.Path)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrCorrupt, want.Path, err)
		}
		if got != want {
			return nil, fmt.Errorf("%w: %s changed (%d bytes, want %d)", ErrCorrupt, want.Path, got.Bytes, want.Bytes)
		}
	}
	return m, nil
}

// writeSynced writes b to a new file at path and syncs it.
func writeSynced(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	return errors.Join(err, f.Sync(), f.Close())
}
