package relay

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/blugelabs/bluge"
	"github.com/blugelabs/bluge/search"
	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/events"
)

// searchableTags lists, per kind, the tags whose values NIP-50 search
// matches (besides content). Kinds not listed here are not indexed.
var searchableTags = map[int][]string{
	4199:  {"title", "description", "role", "use-criteria"}, // agent definitions
	4129:  {"title", "category", "t"},                       // lessons
	1111:  {},                                               // lesson comments: content only
	30199: {},                                               // capability packages: events.CapabilitySearchText, not the raw YAML
}

// searchKinds are the indexed kinds, for the rebuild.
var searchKinds = []int{4199, 4129, 1111, 30199}

// Index document fields.
const (
	fieldText    = "text"
	fieldKind    = "kind"
	fieldPubKey  = "pubkey"
	fieldCreated = "created_at"
	// cleanMarker exists in the index directory only between a clean Close
	// and the next Open; without it the index is rebuilt from LMDB.
	cleanMarker = "CLEAN"
	// maxSearchWindow bounds one index query.
	maxSearchWindow = 10_000
)

// SearchText is the text the index holds for evt, or "" when evt's kind is
// not searchable.
func SearchText(evt *nostr.Event) string {
	if evt.Kind == events.KindCapability {
		return events.CapabilitySearchText(evt)
	}
	names, ok := searchableTags[evt.Kind]
	if !ok {
		return ""
	}
	var b strings.Builder
	for _, tag := range evt.Tags {
		if len(tag) >= 2 && slices.Contains(names, tag[0]) {
			b.WriteString(tag[1])
			b.WriteByte('\n')
		}
	}
	b.WriteString(evt.Content)
	return b.String()
}

// searchIndex is the NIP-50 full-text index (bluge). It holds ids and
// searchable text; events are read back from LMDB.
//
// Writes are asynchronous and batched: the LMDB commit is the durable
// write of an event; the indexer commits a batch at most every indexDelay
// (a bluge segment per batch, not per event, and no fsync: search_dir.go).
// A search first flushes every queued write (read-your-writes). After a
// crash the index may lack the last events or hold torn files: Open
// discards it and rebuilds it from LMDB unless the previous Close left
// the clean marker.
type searchIndex struct {
	path    string
	writer  *bluge.Writer
	log     *slog.Logger
	reqs    chan indexRequest
	stopped chan struct{}
	// unflushed counts writes queued but not yet committed; a search with
	// nothing unflushed skips the flush (an empty batch still costs a
	// bluge commit).
	unflushed atomic.Int64
	// failed is set by the first failed index write (a full disk, ...):
	// bluge keeps the unwritten segments in memory and retries them with
	// the next write, but a close then leaves no clean marker, so the next
	// Open rebuilds the index from LMDB.
	failed atomic.Bool
}

// indexRequest is one queued write (doc or del) or a flush (done only).
type indexRequest struct {
	doc  *bluge.Document
	del  string
	done chan error
}

// openSearchIndex opens the index at path. An index that was not closed
// cleanly is removed first: its segment files are not fsynced while it
// runs (backoffDir), so after a crash they may be torn; the caller
// rebuilds it from LMDB (clean is false).
func openSearchIndex(path string, log *slog.Logger) (x *searchIndex, clean bool, err error) {
	clean = fileExists(filepath.Join(path, cleanMarker))
	if !clean {
		if err := os.RemoveAll(path); err != nil {
			return nil, false, fmt.Errorf("search index: %w", err)
		}
	}
	writer, err := bluge.OpenWriter(searchConfig(path))
	if err != nil {
		return nil, false, fmt.Errorf("open search index: %w", err)
	}
	if clean {
		if err := os.Remove(filepath.Join(path, cleanMarker)); err != nil {
			writer.Close()
			return nil, false, fmt.Errorf("search index: %w", err)
		}
	}
	x = &searchIndex{path: path, writer: writer, log: log,
		reqs: make(chan indexRequest, 4096), stopped: make(chan struct{})}
	go x.run()
	return x, clean, nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// run is the indexer: one goroutine, owned by the index, ended by close.
// Each bluge batch is a segment that bluge writes and later merges with
// the others, a fixed cost far above a document's, so writes are gathered
// for up to indexDelay (or maxBatch documents) before they are committed;
// a flush commits at once. Searches flush first, so the delay is never
// visible.
func (x *searchIndex) run() {
	defer close(x.stopped)
	for first := range x.reqs {
		pending := x.gather(first)
		batch, writes := bluge.NewBatch(), int64(0)
		for _, r := range pending {
			if r.doc != nil {
				batch.Update(r.doc.ID(), r.doc)
				writes++
			} else if r.del != "" {
				batch.Delete(bluge.Identifier(r.del))
				writes++
			}
		}
		var err error
		if writes > 0 {
			if err = x.writer.Batch(batch); err != nil && !x.failed.Swap(true) {
				x.log.Error("search index write failed; the index is rebuilt at the next open", "err", err)
			}
			x.unflushed.Add(-writes)
		}
		for _, r := range pending {
			if r.done != nil {
				r.done <- err
			}
		}
	}
}

// Batching of index writes. With 500 ms, 50 relays taking 50 lessons a
// second spent about 40% of their CPU building and merging bluge segments
// (docs/PEERS.md, Federation).
const (
	indexDelay = 5 * time.Second
	maxBatch   = 2048
)

// gather collects first and the requests that follow it, until a flush
// arrives, the batch is full, the queue closes or indexDelay has passed.
func (x *searchIndex) gather(first indexRequest) []indexRequest {
	pending := []indexRequest{first}
	if first.done != nil {
		return pending
	}
	timer := time.NewTimer(indexDelay)
	defer timer.Stop()
	for len(pending) < maxBatch {
		select {
		case r, ok := <-x.reqs:
			if !ok {
				return pending
			}
			pending = append(pending, r)
			if r.done != nil {
				return pending
			}
		case <-timer.C:
			return pending
		}
	}
	return pending
}

// index queues evt's searchable text; events of other kinds are ignored.
func (x *searchIndex) index(evt *nostr.Event) {
	text := SearchText(evt)
	if text == "" {
		return
	}
	doc := bluge.NewDocument(evt.ID)
	doc.AddField(bluge.NewTextField(fieldText, text))
	doc.AddField(bluge.NewKeywordField(fieldKind, strconv.Itoa(evt.Kind)))
	doc.AddField(bluge.NewKeywordField(fieldPubKey, evt.PubKey))
	doc.AddField(createdField(evt.CreatedAt))
	x.unflushed.Add(1)
	x.reqs <- indexRequest{doc: doc}
}

// remove queues evt's removal (a no-op when it was never indexed).
func (x *searchIndex) remove(evt *nostr.Event) {
	if _, ok := searchableTags[evt.Kind]; ok {
		x.unflushed.Add(1)
		x.reqs <- indexRequest{del: evt.ID}
	}
}

// flush waits until every write queued before it is committed.
func (x *searchIndex) flush(ctx context.Context) error {
	if x.unflushed.Load() == 0 {
		return nil
	}
	done := make(chan error, 1)
	x.reqs <- indexRequest{done: done}
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ids runs a NIP-50 search and returns matching event ids, best first. The
// index knows kinds, authors and time bounds; the caller re-checks every
// other filter field.
func (x *searchIndex) ids(ctx context.Context, filter nostr.Filter) ([]string, error) {
	// A failed flush (a full disk) still leaves the queued documents in
	// bluge's in-memory snapshot: search them.
	if err := x.flush(ctx); err != nil && ctx.Err() != nil {
		return nil, err
	}
	reader, err := x.writer.Reader()
	if err != nil {
		return nil, fmt.Errorf("search reader: %w", err)
	}
	defer reader.Close()
	limit := min(max(filter.Limit, 1), maxSearchWindow)
	dmi, err := reader.Search(ctx, bluge.NewTopNSearch(limit, searchQuery(filter)))
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	return collectIDs(dmi)
}

func collectIDs(dmi search.DocumentMatchIterator) ([]string, error) {
	var ids []string
	next, err := dmi.Next()
	for err == nil && next != nil {
		next.VisitStoredFields(func(field string, value []byte) bool {
			if field == "_id" {
				ids = append(ids, string(value))
			}
			return true
		})
		next, err = dmi.Next()
	}
	return ids, err
}

// searchQuery is the words of filter.Search (any of them, ranked) within
// the filter's kinds, authors and time bounds.
func searchQuery(filter nostr.Filter) bluge.Query {
	q := bluge.NewBooleanQuery().AddMust(bluge.NewMatchQuery(filter.Search).SetField(fieldText))
	if len(filter.Kinds) > 0 {
		kinds := bluge.NewBooleanQuery().SetMinShould(1)
		for _, k := range filter.Kinds {
			kinds.AddShould(bluge.NewTermQuery(strconv.Itoa(k)).SetField(fieldKind))
		}
		q.AddMust(kinds)
	}
	if len(filter.Authors) > 0 {
		authors := bluge.NewBooleanQuery().SetMinShould(1)
		for _, a := range filter.Authors {
			authors.AddShould(bluge.NewTermQuery(a).SetField(fieldPubKey))
		}
		q.AddMust(authors)
	}
	if bounds := createdBounds(filter); bounds != nil {
		q.AddMust(bounds)
	}
	return q
}

// close commits what is queued, stops the indexer and, unless a write
// failed, syncs the index files and marks the index clean, so that the
// next Open trusts it.
func (x *searchIndex) close() error {
	close(x.reqs)
	<-x.stopped
	if err := x.writer.Close(); err != nil || x.failed.Load() {
		return err
	}
	if err := syncIndexDir(x.path); err != nil {
		return err
	}
	marker := filepath.Join(x.path, cleanMarker)
	if err := os.WriteFile(marker, nil, 0o644); err != nil {
		return err
	}
	return errors.Join(syncFile(marker), syncFile(x.path))
}
