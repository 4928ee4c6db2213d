package replicate

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip44"

	"github.com/agentnode/agentnode/agentd/state/schema"
	"github.com/agentnode/agentnode/agentd/state/store"
)

// Anti-entropy: every AntiEntropyInterval a replicator sends each agent of
// its owner (and its own key, for the same agent on other nodes) a digest
// of the documents both may read — per schema, per bucket, a hash of the
// documents' live op ids. A replicator receiving a digest that differs
// from its own view of the same set sends the sender every op of the
// documents in the differing buckets, compressed, encrypted to the sender
// alone: a late or forgetful replica catches up from any peer that holds
// the state, whoever made the ops. docs/ASM.md §9.4.

// TagASM marks a kind-4290 event that is not an op batch pushed by its
// maker: ["asm","digest"] or ["asm","repair"].
const TagASM = "asm"

// TagCodec names the compression of a repair event's batch (base64 of the
// compressed JSON array before encryption).
const TagCodec = "codec"

const (
	asmDigest = "digest"
	asmRepair = "repair"
	// DefaultAntiEntropy is how often digests go out.
	DefaultAntiEntropy = time.Minute
	// digestBuckets is how many buckets a schema's documents hash into:
	// a difference resends the documents of one bucket.
	digestBuckets = 64
	repairCodec   = schema.Zstd
)

// digestMsg is a digest event's decrypted content.
type digestMsg struct {
	Owner   string `json:"owner"`
	Replica string `json:"replica"`
	// Schemas maps every schema URI the sender knows to its non-empty
	// buckets (index -> hex of 16 bytes, the XOR of the documents' hashes).
	Schemas map[string]map[string]string `json:"schemas"`
}

// bucketSet is one side's view: per schema, per bucket, the XOR of the
// document hashes and the documents.
type bucketSet map[string]map[int]*bucket

type bucket struct {
	sum  [16]byte
	docs []store.DocDigest
}

// bucketOf places a document in a bucket.
func bucketOf(uri, doc string) int {
	h := sha256.Sum256([]byte(uri + "\x00" + doc))
	return int(binary.BigEndian.Uint16(h[:2]) % digestBuckets)
}

// add folds a document's digest into its bucket.
func (b bucketSet) add(d store.DocDigest) {
	m := b[d.Schema]
	if m == nil {
		m = map[int]*bucket{}
		b[d.Schema] = m
	}
	i := bucketOf(d.Schema, d.Doc)
	if m[i] == nil {
		m[i] = &bucket{}
	}
	k := sha256.New()
	k.Write([]byte(d.Doc + "\x00"))
	k.Write(d.Hash[:])
	for j, c := range k.Sum(nil)[:16] {
		m[i].sum[j] ^= c
	}
	m[i].docs = append(m[i].docs, d)
}

// holdings reads every digest of this owner's documents in replicated
// scopes, with their schema.
func (r *Replicator) holdings(ctx context.Context) ([]store.DocDigest, error) {
	prefixes, err := r.st.Namespaces(ctx)
	if err != nil {
		return nil, err
	}
	var out []store.DocDigest
	for _, ns := range prefixes {
		ds, err := r.st.Digests(ctx, ns)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", ns, err)
		}
		for _, d := range ds {
			if d.Owner == r.cfg.Owner && r.inScope(d.Scope) {
				out = append(out, d)
			}
		}
	}
	return out, nil
}

// sharedWith returns the buckets of the documents in ds that both this
// replicator's key and peer may read, limited to schemas in only (nil:
// every schema this replica knows).
func (r *Replicator) sharedWith(ds []store.DocDigest, peer string, only map[string]bool) bucketSet {
	out := bucketSet{}
	for _, d := range ds {
		sch, ok := r.cfg.Schemas.Lookup(d.Schema)
		if !ok || (only != nil && !only[d.Schema]) {
			continue
		}
		if mayRead(sch.Visibility, d, r.keys.pk, r.cfg.Owner) && mayRead(sch.Visibility, d, peer, r.cfg.Owner) {
			out.add(d)
		}
	}
	return out
}

// mayRead reports whether key (the owner or one of the owner's agents)
// may read a document of the owner with visibility vis.
func mayRead(vis string, d store.DocDigest, key, owner string) bool {
	return vis != schema.Private || key == owner || key == d.Agent
}

// knownSchemas lists the schema URIs this replica knows.
func (r *Replicator) knownSchemas() []string {
	all, ok := r.cfg.Schemas.(interface{ All() []*schema.Schema })
	if !ok {
		return nil
	}
	var out []string
	for _, s := range all.All() {
		out = append(out, s.URI)
	}
	slices.Sort(out)
	return out
}

// antiEntropy sends digests at start and every AntiEntropyInterval until
// ctx ends.
func (r *Replicator) antiEntropy(ctx context.Context) {
	for {
		if err := r.sendDigests(ctx); err != nil && ctx.Err() == nil {
			r.log.Warn("replicate: anti-entropy digest not sent", "err", err)
		}
		if !sleep(ctx, r.cfg.AntiEntropyInterval) {
			return
		}
	}
}

// sendDigests publishes one digest per peer on every link that publishes.
func (r *Replicator) sendDigests(ctx context.Context) error {
	held, err := r.holdings(ctx)
	if err != nil {
		return err
	}
	agents, err := r.cfg.Directory.Agents(ctx, r.cfg.Owner)
	if err != nil {
		return err
	}
	peers := slices.Compact(slices.Sorted(slices.Values(append([]string{r.keys.pk}, agents...))))
	known := r.knownSchemas()
	for _, peer := range peers {
		evt, err := r.digestEvent(r.sharedWith(held, peer, nil), known, peer)
		if err != nil {
			return err
		}
		if err := r.publishEverywhere(ctx, []*nostr.Event{evt}); err != nil {
			return err
		}
		r.stats.digests.Add(1)
	}
	return nil
}

// digestEvent builds the digest of b for peer.
func (r *Replicator) digestEvent(b bucketSet, known []string, peer string) (*nostr.Event, error) {
	msg := digestMsg{Owner: r.cfg.Owner, Replica: string(r.st.Replica()), Schemas: map[string]map[string]string{}}
	for _, uri := range known {
		m := map[string]string{}
		for i, bk := range b[uri] {
			m[strconv.Itoa(i)] = hex.EncodeToString(bk.sum[:])
		}
		msg.Schemas[uri] = m
	}
	raw, err := json.Marshal(msg)
	if err != nil {
		return nil, err
	}
	if len(raw) > MaxPlaintext {
		return nil, fmt.Errorf("replicate: digest of %d schemas too large (%d bytes)", len(known), len(raw))
	}
	exp := nostr.Now() + nostr.Timestamp(3*r.cfg.AntiEntropyInterval/time.Second) + 60
	tags := nostr.Tags{{TagASM, asmDigest}, {TagVis, schema.Private}, {TagOwner, r.cfg.Owner}, {TagReplica, string(r.st.Replica())},
		{"expiration", strconv.FormatInt(int64(exp), 10)}, {"alt", "Agent State Model anti-entropy digest"}}
	return sealRaw(r.keys, tags, raw, peer, nostr.Now())
}

// sealRaw signs an event of kind Kind with tags, content encrypted to reader.
func sealRaw(keys *keyring, tags nostr.Tags, plain []byte, reader string, at nostr.Timestamp) (*nostr.Event, error) {
	ck, err := keys.conversation(reader)
	if err != nil {
		return nil, err
	}
	content, err := nip44.Encrypt(string(plain), ck)
	if err != nil {
		return nil, fmt.Errorf("replicate: encrypt: %w", err)
	}
	evt := &nostr.Event{Kind: Kind, CreatedAt: at, Tags: append(tags, nostr.Tag{"p", reader}), Content: content}
	if err := evt.Sign(keys.sk); err != nil {
		return nil, fmt.Errorf("replicate: sign: %w", err)
	}
	return evt, nil
}

// publishEverywhere sends evts on every link that publishes; it fails
// only if no link took them.
func (r *Replicator) publishEverywhere(ctx context.Context, evts []*nostr.Event) error {
	var last error
	ok := false
	for _, l := range r.cfg.Links {
		if l.Publisher == nil {
			continue
		}
		if err := r.publish(ctx, l, evts); err != nil {
			last = fmt.Errorf("%s: %w", l.Name, err)
			continue
		}
		ok = true
	}
	if !ok {
		return last
	}
	return nil
}
