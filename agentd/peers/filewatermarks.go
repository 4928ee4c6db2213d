package peers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/agentnode/agentnode/agentd/internal/atomicfile"
)

// WatermarksFile is the file FileWatermarks keeps in the data directory.
const WatermarksFile = "peers.json"

// FileWatermarks keeps marks in <dir>/peers.json. Every Save rewrites the
// whole file atomically (temporary file, fsync, rename, fsync of the
// directory): a crash leaves either the old marks or the new ones.
type FileWatermarks struct {
	path string

	mu    sync.Mutex
	peers map[string]Marks
}

// watermarksDoc is the file's shape.
type watermarksDoc struct {
	Version int              `json:"version"`
	Peers   map[string]Marks `json:"peers"`
}

// OpenFileWatermarks reads <dir>/peers.json, or starts empty when it does
// not exist. A file that does not parse is an error (delete it to start
// over: the syncer then fetches everything again, which is safe).
func OpenFileWatermarks(dir string) (*FileWatermarks, error) {
	w := &FileWatermarks{path: filepath.Join(dir, WatermarksFile), peers: map[string]Marks{}}
	data, err := os.ReadFile(w.path)
	if errors.Is(err, fs.ErrNotExist) {
		return w, nil
	}
	if err != nil {
		return nil, fmt.Errorf("peers: watermarks: %w", err)
	}
	var doc watermarksDoc
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("peers: watermarks: %s: %w", w.path, err)
	}
	if doc.Peers != nil {
		w.peers = doc.Peers
	}
	return w, nil
}

// Path is the file's location.
func (w *FileWatermarks) Path() string { return w.path }

// Load implements Watermarks.
func (w *FileWatermarks) Load(_ context.Context, peer string) (Marks, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.peers[peer].Clone(), nil
}

// Save implements Watermarks.
func (w *FileWatermarks) Save(ctx context.Context, peer string, m Marks) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	old, had := w.peers[peer]
	w.peers[peer] = m.Clone()
	data, err := json.MarshalIndent(watermarksDoc{Version: 1, Peers: w.peers}, "", "  ")
	if err == nil {
		err = atomicfile.Write(w.path, data, 0o600)
	}
	if err != nil {
		if had {
			w.peers[peer] = old
		} else {
			delete(w.peers, peer)
		}
		return fmt.Errorf("peers: watermarks: %w", err)
	}
	return nil
}
