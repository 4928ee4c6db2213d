package dm

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentnode/agentnode/agentd/internal/atomicfile"
	"github.com/nbd-wtf/go-nostr"
)

// The operations of a ledger record.
const (
	opBegin = "begin" // a reply is pending (Wraps)
	opDone  = "done"  // the wrap is processed (Now: when)
)

// ledgerRecord is one line of the log.
type ledgerRecord struct {
	Op    string         `json:"op"`
	ID    string         `json:"id"`
	At    int64          `json:"at"`
	Now   int64          `json:"now,omitempty"`
	Wraps []*nostr.Event `json:"wraps,omitempty"`
}

// ledgerFile is the snapshot's JSON (the format of the old whole-file
// state.json, which a snapshot still is).
type ledgerFile struct {
	// Watermark is the unix time of the last processed wrap.
	Watermark int64 `json:"watermark"`
	// Done maps processed wrap ids to their created_at.
	Done map[string]int64 `json:"done"`
	// Pending maps wrap ids whose reply may not be published yet to it.
	Pending map[string]PendingReply `json:"pending,omitempty"`
}

// minCompact is the fewest log records that trigger a compaction.
const minCompact = 4096

// maxRecord bounds one log line (a pending reply holds two gift wraps).
const maxRecord = 8 << 20

// ledgerFiles are the snapshot (path, written whole and atomically) and
// the log beside it (path without ".json" + ".log", appended to).
type ledgerFiles struct {
	path     string
	log      *os.File
	appended int // records in the log
}

// logPath is the log beside the snapshot at path.
func logPath(path string) string { return strings.TrimSuffix(path, ".json") + ".log" }

// openLedgerFiles reads the snapshot and the log into st, forgets ids
// older than the window, folds the log
// into a new snapshot if it had records, and opens the log for appends.
func openLedgerFiles(path string, window time.Duration, st *ledgerState) (*ledgerFiles, error) {
	if err := readSnapshot(path, st); err != nil {
		return nil, err
	}
	n, err := replayLog(logPath(path), st)
	if err != nil {
		return nil, err
	}
	st.forget(window)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("dm: state: %w", err)
	}
	log, err := os.OpenFile(logPath(path), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("dm: state: %w", err)
	}
	f := &ledgerFiles{path: path, log: log}
	if n > 0 || logSize(log) > 0 { // records, or a torn tail to cut before appending after it
		if err := f.compact(st.file()); err != nil {
			log.Close()
			return nil, fmt.Errorf("dm: state: %w", err)
		}
	}
	return f, nil
}

// logSize is the log's size in bytes (0 if unknown).
func logSize(f *os.File) int64 {
	info, err := f.Stat()
	if err != nil {
		return 0
	}
	return info.Size()
}

// readSnapshot loads the snapshot at path into st (missing: nothing).
func readSnapshot(path string, st *ledgerState) error {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("dm: read state: %w", err)
	}
	var file ledgerFile
	if err := json.Unmarshal(b, &file); err != nil {
		return fmt.Errorf("dm: state %s is not valid JSON: %w", path, err)
	}
	st.watermark = file.Watermark
	for id, at := range file.Done {
		st.done[keyOf(id)] = at
	}
	for id, p := range file.Pending {
		st.pending[id] = p
	}
	return nil
}

// replayLog applies the log's records to st and returns how many it
// applied. A line that does not parse is the torn tail of a crash in the
// middle of an append (its step never returned): it and what follows are
// ignored.
func replayLog(path string, st *ledgerState) (int, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("dm: read state log: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), maxRecord)
	n := 0
	for sc.Scan() {
		var rec ledgerRecord
		if json.Unmarshal(sc.Bytes(), &rec) != nil || rec.ID == "" {
			break
		}
		st.apply(rec)
		n++
	}
	if err := sc.Err(); err != nil && !errors.Is(err, bufio.ErrTooLong) {
		return n, fmt.Errorf("dm: read state log: %w", err)
	}
	return n, nil
}

// close closes the log.
func (f *ledgerFiles) close() error { return f.log.Close() }

// append writes rec as one line and fsyncs it.
func (f *ledgerFiles) append(rec ledgerRecord) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	if _, err := f.log.Write(append(b, '\n')); err != nil {
		return err
	}
	f.appended++
	return f.log.Sync()
}

// due reports whether the log holds more records than the ledger has ids
// (and at least minCompact): folding it then costs O(1) per record.
func (f *ledgerFiles) due(size int) bool {
	return f.appended >= max(minCompact, size)
}

// compact writes snap as the new snapshot, then empties the log. A crash
// in between replays the log over the new snapshot, which changes
// nothing (its records are already in it).
func (f *ledgerFiles) compact(snap ledgerFile) error {
	b, err := json.Marshal(snap)
	if err != nil {
		return err
	}
	if err := atomicfile.Write(f.path, b, 0o600); err != nil {
		return err
	}
	if err := f.log.Truncate(0); err != nil {
		return err
	}
	f.appended = 0
	return f.log.Sync()
}

// file is st as a snapshot.
func (st *ledgerState) file() ledgerFile {
	file := ledgerFile{Watermark: st.watermark, Done: make(map[string]int64, len(st.done)), Pending: maps.Clone(st.pending)}
	for k, at := range st.done {
		file.Done[hex.EncodeToString(k[:])] = at
	}
	return file
}
