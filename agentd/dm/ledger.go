package dm

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/agentnode/agentnode/agentd/internal/atomicfile"
	"github.com/nbd-wtf/go-nostr"
)

// ledger remembers which gift wraps were processed, so that neither the
// live hook and the catch-up together nor a restart answer one twice.
// Ids are kept for the catch-up window: an older wrap is never looked at.
type ledger struct {
	path   string // "" = memory only
	window time.Duration

	saveMu sync.Mutex // serialises mark, so the last file written is the newest state
	mu     sync.Mutex // guards state; never held during file I/O (has runs in the relay's hook)
	state  ledgerFile
}

// ledgerFile is the JSON on disk.
type ledgerFile struct {
	// Watermark is the unix time of the last processed wrap.
	Watermark int64 `json:"watermark"`
	// Done maps processed wrap ids to their created_at.
	Done map[string]int64 `json:"done"`
}

// openLedger reads path (a missing file is an empty ledger).
func openLedger(path string, window time.Duration) (*ledger, error) {
	l := &ledger{path: path, window: window, state: ledgerFile{Done: map[string]int64{}}}
	if path == "" {
		return l, nil
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return l, nil
	}
	if err != nil {
		return nil, fmt.Errorf("dm: read state: %w", err)
	}
	if err := json.Unmarshal(b, &l.state); err != nil {
		return nil, fmt.Errorf("dm: state %s is not valid JSON: %w", path, err)
	}
	if l.state.Done == nil {
		l.state.Done = map[string]int64{}
	}
	return l, nil
}

// has reports whether wrap id was processed.
func (l *ledger) has(id string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, ok := l.state.Done[id]
	return ok
}

// since is where a catch-up starts: a window before the watermark, or
// before now when nothing was ever processed.
func (l *ledger) since(now time.Time) nostr.Timestamp {
	l.mu.Lock()
	defer l.mu.Unlock()
	from := now
	if l.state.Watermark > 0 {
		from = time.Unix(l.state.Watermark, 0)
	}
	return nostr.Timestamp(from.Add(-l.window).Unix())
}

// mark records wrap as processed at now, forgets ids older than the
// window and saves the file.
func (l *ledger) mark(wrap *nostr.Event, now time.Time) error {
	l.saveMu.Lock()
	defer l.saveMu.Unlock()
	b, err := l.record(wrap, now)
	if err != nil || l.path == "" {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(l.path), 0o700); err != nil {
		return fmt.Errorf("dm: save state: %w", err)
	}
	if err := atomicfile.Write(l.path, b, 0o600); err != nil {
		return fmt.Errorf("dm: save state: %w", err)
	}
	return nil
}

// record updates the state in memory and returns it as JSON.
func (l *ledger) record(wrap *nostr.Event, now time.Time) ([]byte, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.state.Done[wrap.ID] = int64(wrap.CreatedAt)
	l.state.Watermark = max(l.state.Watermark, now.Unix())
	cut := l.state.Watermark - int64(l.window/time.Second)
	for id, at := range l.state.Done {
		if at < cut {
			delete(l.state.Done, id)
		}
	}
	return json.Marshal(l.state)
}
