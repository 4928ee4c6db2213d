package relay

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
)

// ListsFile is where the operator's lists live in the data directory.
const ListsFile = "relay-management.json"

// MaxListEntries bounds each list (pubkeys, events, kinds): the file and
// the memory they take stay bounded even for an operator's script gone
// wrong.
const MaxListEntries = 100_000

// ErrListFull is returned when a list already holds MaxListEntries.
var ErrListFull = errors.New("relay: list full")

// listState is the persisted form of the operator's lists (NIP-86).
type listState struct {
	BannedPubkeys   map[string]string `json:"banned_pubkeys"`  // pubkey -> reason
	AllowedPubkeys  map[string]string `json:"allowed_pubkeys"` // non-empty: only these (and the exempt) publish
	BannedEvents    map[string]string `json:"banned_events"`   // id -> reason
	AllowedKinds    []int             `json:"allowed_kinds"`   // non-empty: only these kinds are stored
	DisallowedKinds []int             `json:"disallowed_kinds"`
}

// lists are the operator's allow and deny lists, persisted as JSON in the
// data directory (ListsFile) at every change. Safe for concurrent use.
type lists struct {
	mu   sync.RWMutex
	path string // "": kept in memory only
	st   listState
}

// loadLists reads path (absent: empty lists).
func loadLists(path string) (*lists, error) {
	l := &lists{path: path}
	if path != "" {
		b, err := os.ReadFile(path)
		switch {
		case errors.Is(err, os.ErrNotExist):
		case err != nil:
			return nil, fmt.Errorf("relay: lists: %w", err)
		default:
			if err := json.Unmarshal(b, &l.st); err != nil {
				return nil, fmt.Errorf("relay: lists: %s: %w", path, err)
			}
		}
	}
	l.st.init()
	return l, nil
}

func (s *listState) init() {
	for _, m := range []*map[string]string{&s.BannedPubkeys, &s.AllowedPubkeys, &s.BannedEvents} {
		if *m == nil {
			*m = map[string]string{}
		}
	}
}

// update applies fn under the lock and persists the result; a failed
// save leaves the lists as they were.
func (l *lists) update(fn func(st *listState) error) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	next := l.st.clone()
	if err := fn(&next); err != nil {
		return err
	}
	if err := l.save(next); err != nil {
		return err
	}
	l.st = next
	return nil
}

// save writes st atomically (a temporary file renamed over the old one).
func (l *lists) save(st listState) error {
	if l.path == "" {
		return nil
	}
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	tmp := l.path + ".tmp"
	if err := os.MkdirAll(filepath.Dir(l.path), 0o700); err != nil {
		return fmt.Errorf("relay: lists: %w", err)
	}
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("relay: lists: %w", err)
	}
	if err := os.Rename(tmp, l.path); err != nil {
		return fmt.Errorf("relay: lists: %w", err)
	}
	return nil
}

// reload rereads the file (SIGHUP: an operator may edit it by hand).
func (l *lists) reload() error {
	fresh, err := loadLists(l.path)
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.st = fresh.st
	return nil
}

func (s listState) clone() listState {
	c := listState{AllowedKinds: slices.Clone(s.AllowedKinds), DisallowedKinds: slices.Clone(s.DisallowedKinds)}
	c.BannedPubkeys, c.AllowedPubkeys, c.BannedEvents = cloneMap(s.BannedPubkeys), cloneMap(s.AllowedPubkeys), cloneMap(s.BannedEvents)
	return c
}

func cloneMap(m map[string]string) map[string]string {
	c := make(map[string]string, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// put sets m[key] unless m is full.
func put(m map[string]string, key, reason string) error {
	if _, ok := m[key]; !ok && len(m) >= MaxListEntries {
		return fmt.Errorf("%w: %d entries", ErrListFull, MaxListEntries)
	}
	m[key] = reason
	return nil
}

// addKind adds kind to *list (once) unless it is full.
func addKind(list *[]int, kind int) error {
	if slices.Contains(*list, kind) {
		return nil
	}
	if len(*list) >= MaxListEntries {
		return fmt.Errorf("%w: %d entries", ErrListFull, MaxListEntries)
	}
	*list = append(*list, kind)
	slices.Sort(*list)
	return nil
}

// dropKind removes kind from *list.
func dropKind(list *[]int, kind int) {
	*list = slices.DeleteFunc(*list, func(k int) bool { return k == kind })
}
