package registry

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// SeenLog is the registry's memory of when this node first saw each
// (author, name): an append-only file of JSON lines {"a", "n", "s"} (s is
// a sequence number: the order of arrival), so that the rule "first seen
// by this node" (docs/REGISTRY.md) survives a restart. One line is written
// per new (author, name), never rewritten; a torn last line is ignored.
// It is safe for concurrent use.
type SeenLog struct {
	mu   sync.Mutex
	f    *os.File
	seen map[string]uint64 // authorName(author, name) -> sequence
	next uint64
}

type seenLine struct {
	Author string `json:"a"`
	Name   string `json:"n"`
	Seq    uint64 `json:"s"`
}

// OpenSeenLog opens (creating it and its directory) the log at path and
// reads what it holds. Close it when done.
func OpenSeenLog(path string) (*SeenLog, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("registry: seen log: %w", err)
	}
	l := &SeenLog{seen: map[string]uint64{}, next: 1}
	torn, err := l.read(path)
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("registry: seen log: %w", err)
	}
	if torn { // end the torn line, so that the next one stands alone
		if _, err := f.Write([]byte{'\n'}); err != nil {
			f.Close()
			return nil, fmt.Errorf("registry: seen log: %w", err)
		}
	}
	l.f = f
	return l, nil
}

// read loads the lines of path (none when it does not exist); torn: the
// file does not end with a newline (a crash mid-append).
func (l *SeenLog) read(path string) (torn bool, err error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("registry: seen log: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		var ln seenLine
		if json.Unmarshal(sc.Bytes(), &ln) != nil || ln.Seq == 0 {
			continue // a torn or foreign line
		}
		k := authorName(ln.Author, ln.Name)
		if old, ok := l.seen[k]; !ok || ln.Seq < old {
			l.seen[k] = ln.Seq
		}
		l.next = max(l.next, ln.Seq+1)
	}
	return len(b) > 0 && b[len(b)-1] != '\n', sc.Err()
}

// Close closes the file.
func (l *SeenLog) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.f.Close()
}

// first returns when (author, name) was first seen.
func (l *SeenLog) first(author, name string) (uint64, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s, ok := l.seen[authorName(author, name)]
	return s, ok
}

// note records (author, name) as seen now, at sequence seq (0: the next
// one), unless it was seen before. It reports the sequence kept. A failed
// write is returned; the sequence is kept in memory all the same.
func (l *SeenLog) note(author, name string, seq uint64) (uint64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	k := authorName(author, name)
	if s, ok := l.seen[k]; ok {
		return s, nil
	}
	if seq == 0 {
		seq = l.next
	}
	l.next = max(l.next, seq+1)
	l.seen[k] = seq
	if l.f == nil {
		return seq, nil
	}
	b, _ := json.Marshal(seenLine{Author: author, Name: name, Seq: seq})
	_, err := l.f.Write(append(b, '\n'))
	return seq, err
}

// reserve returns a sequence number for a batch (Load): every (author,
// name) first seen in one batch gets the same one, so they tie.
func (l *SeenLog) reserve() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.next
	l.next++
	return s
}

// memorySeen is the log of a registry without a file (the CLI): it
// remembers for the process's life only.
func memorySeen() *SeenLog { return &SeenLog{seen: map[string]uint64{}, next: 1} }
