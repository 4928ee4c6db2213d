package replicate

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd/state/store"
)

// TagChunk marks one part of an op too large for one event:
// ["chunk", <sha256 hex of the whole payload>, <index>, <count>]. The
// payload is base64 of the zstd-compressed JSON batch [envelope]; each
// part is at most MaxBatchBytes of it, sealed like any batch (plaintext
// for public state, encrypted per reader otherwise; repairs to the one
// peer). The receiver keeps the parts until all have come, checks the
// sum, and applies the envelope like any batch.
const TagChunk = "chunk"

// Chunk limits on the receiving side.
const (
	maxChunkParts   = 4096             // parts of one payload (4096 × 40,960 bytes ≈ 160 MiB of base64)
	maxChunkPending = 256 << 20        // bytes kept for unfinished payloads (parts and their slots)
	maxChunkPartial = 256              // unfinished payloads kept at once
	maxChunkAuthor  = 4                // unfinished payloads kept per author
	chunkTTL        = 10 * time.Minute // an unfinished payload is dropped after this
	chunkSlot       = 16               // bytes a part's slot costs before it comes (a string header)
)

// errOpTooLarge: an op needs more than maxChunkParts events. It is left
// out of pushes and repairs (logged) rather than holding back the ops
// after it.
var errOpTooLarge = errors.New("replicate: op too large to replicate")

// chunkPayload encodes env alone as a compressed batch and splits it into
// parts of at most limit bytes; sum names the payload.
func chunkPayload(env store.Envelope, limit int) (sum string, parts []string, err error) {
	env.Seq = 0
	b, err := json.Marshal([]store.Envelope{env})
	if err != nil {
		return "", nil, fmt.Errorf("replicate: encode op: %w", err)
	}
	z, err := store.Compress(repairCodec, b)
	if err != nil {
		return "", nil, err
	}
	if need := (base64.StdEncoding.EncodedLen(len(z)) + limit - 1) / limit; need > maxChunkParts {
		return "", nil, fmt.Errorf("%w: op %s needs %d events, more than %d", errOpTooLarge, env.OpID(), need, maxChunkParts)
	}
	enc := base64.StdEncoding.EncodeToString(z)
	h := sha256.Sum256([]byte(enc))
	for len(enc) > 0 {
		n := min(limit, len(enc))
		parts, enc = append(parts, enc[:n]), enc[n:]
	}
	return hex.EncodeToString(h[:]), parts, nil
}

// chunkEvents seals the parts of each of envs for every reader ("" for a
// plaintext public event), with extra tags besides the batch head's. An
// op too large for maxChunkParts events is logged and left out.
func chunkEvents(keys *keyring, log *slog.Logger, h batchHead, extra nostr.Tags, envs []store.Envelope, readers []string, limit int, at nostr.Timestamp) ([]*nostr.Event, error) {
	var out []*nostr.Event
	for _, env := range envs {
		sum, parts, err := chunkPayload(env, limit)
		if errors.Is(err, errOpTooLarge) {
			log.Error("replicate: op not sent", "schema", h.Schema, "err", err)
			continue
		}
		if err != nil {
			return nil, err
		}
		for i, p := range parts {
			tags := append(h.tags(), extra...)
			tags = append(tags, nostr.Tag{TagCodec, repairCodec}, nostr.Tag{TagChunk, sum, strconv.Itoa(i), strconv.Itoa(len(parts))})
			for _, reader := range readers {
				evt, err := sealTagged(keys, tags, []byte(p), reader, at)
				if err != nil {
					return nil, err
				}
				out = append(out, evt)
			}
		}
	}
	return out, nil
}

// chunkOf reads an event's chunk tag; ok is false when it has none.
func chunkOf(evt *nostr.Event) (sum string, i, n int, ok bool, err error) {
	t := evt.Tags.Find(TagChunk)
	if t == nil {
		return "", 0, 0, false, nil
	}
	if len(t) < 4 {
		return "", 0, 0, true, fmt.Errorf("%w: chunk tag needs sum, index and count", ErrBadEvent)
	}
	i, err1 := strconv.Atoi(t[2])
	n, err2 := strconv.Atoi(t[3])
	if err1 != nil || err2 != nil || n < 1 || n > maxChunkParts || i < 0 || i >= n || len(t[1]) != 64 {
		return "", 0, 0, true, fmt.Errorf("%w: bad chunk tag", ErrBadEvent)
	}
	return t[1], i, n, true, nil
}

// chunks holds the parts of unfinished payloads, per author and sum.
type chunks struct {
	mu      sync.Mutex
	pending map[string]*partial
	size    int
}

type partial struct {
	author string
	parts  []string
	got    int
	size   int
	since  time.Time
}

// add keeps one part and returns the whole payload once every part has
// come (and its sum matches); "" until then. Parts of payloads older than
// chunkTTL, and the oldest ones past maxChunkPending bytes, are dropped.
func (c *chunks) add(author, sum string, i, n int, part string, now time.Time) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pending == nil {
		c.pending = map[string]*partial{}
	}
	c.expire(now)
	key := author + ":" + sum
	p := c.pending[key]
	if p == nil {
		c.makeRoom(author)
		p = &partial{author: author, parts: make([]string, n), since: now, size: chunkSlot * n}
		c.pending[key], c.size = p, c.size+p.size
	}
	if len(p.parts) != n {
		return "", fmt.Errorf("%w: chunk count %d, earlier parts said %d", ErrBadEvent, n, len(p.parts))
	}
	if p.parts[i] == "" {
		p.parts[i], p.got, p.size, c.size = part, p.got+1, p.size+len(part), c.size+len(part)
	}
	if p.got < n {
		return "", nil
	}
	c.drop(key)
	var b strings.Builder
	b.Grow(p.size)
	for _, s := range p.parts {
		b.WriteString(s)
	}
	whole := b.String()
	if h := sha256.Sum256([]byte(whole)); hex.EncodeToString(h[:]) != sum {
		return "", fmt.Errorf("%w: chunked payload does not match its sum", ErrBadEvent)
	}
	return whole, nil
}

func (c *chunks) expire(now time.Time) {
	for key, p := range c.pending {
		if now.Sub(p.since) > chunkTTL {
			c.drop(key)
		}
	}
	for c.size > maxChunkPending {
		c.drop(c.oldest(""))
	}
}

// makeRoom drops author's oldest unfinished payload when it has
// maxChunkAuthor of them, and the oldest of all at maxChunkPartial: one
// author cannot crowd out the others.
func (c *chunks) makeRoom(author string) {
	mine := 0
	for _, p := range c.pending {
		if p.author == author {
			mine++
		}
	}
	if mine >= maxChunkAuthor {
		c.drop(c.oldest(author))
	}
	if len(c.pending) >= maxChunkPartial {
		c.drop(c.oldest(""))
	}
}

// oldest is the key of the oldest unfinished payload (of author, if not "").
func (c *chunks) oldest(author string) string {
	oldest := ""
	for key, p := range c.pending {
		if author != "" && p.author != author {
			continue
		}
		if oldest == "" || p.since.Before(c.pending[oldest].since) {
			oldest = key
		}
	}
	return oldest
}

func (c *chunks) drop(key string) {
	if p, ok := c.pending[key]; ok {
		c.size -= p.size
		delete(c.pending, key)
	}
}
