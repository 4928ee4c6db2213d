package peers

import (
	"context"
	"maps"
	"sync"

	"github.com/nbd-wtf/go-nostr"
)

// Marks are one peer's watermarks, per filter key (see filterKey): Pull
// is the newest created_at received from the peer for an Interests
// filter once its catch-up completed; Push is the newest created_at of an
// Outbox event the peer acknowledged. Watermarks never pass the local
// clock, so an event dated in the future cannot make the syncer skip the
// events of the time in between.
type Marks struct {
	Pull map[string]nostr.Timestamp `json:"pull,omitempty"`
	Push map[string]nostr.Timestamp `json:"push,omitempty"`
}

// Clone returns a deep copy of m.
func (m Marks) Clone() Marks {
	return Marks{Pull: maps.Clone(m.Pull), Push: maps.Clone(m.Push)}
}

// Watermarks keeps each peer's Marks between sessions and restarts.
//
// Load returns the marks last saved for peer (a normalized relay URL), or
// zero Marks when there are none; the caller owns the returned maps.
// Save replaces peer's marks and returns once they are durable (for
// FileWatermarks: on disk). Implementations must be safe for concurrent
// use; the syncer calls Save from one goroutine per peer.
type Watermarks interface {
	Load(ctx context.Context, peer string) (Marks, error)
	Save(ctx context.Context, peer string, m Marks) error
}

var (
	_ Watermarks = (*MemWatermarks)(nil)
	_ Watermarks = (*FileWatermarks)(nil)
)

// MemWatermarks keeps marks in memory: a restart starts over.
type MemWatermarks struct {
	mu    sync.Mutex
	peers map[string]Marks
}

// NewMemWatermarks returns an empty in-memory Watermarks.
func NewMemWatermarks() *MemWatermarks {
	return &MemWatermarks{peers: map[string]Marks{}}
}

// Load implements Watermarks.
func (w *MemWatermarks) Load(_ context.Context, peer string) (Marks, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.peers[peer].Clone(), nil
}

// Save implements Watermarks.
func (w *MemWatermarks) Save(_ context.Context, peer string, m Marks) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.peers[peer] = m.Clone()
	return nil
}
