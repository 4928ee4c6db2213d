package replicate

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd/state/store"
)

// repairReq asks the repairer to send peer every op of docs.
type repairReq struct {
	peer string
	docs []store.DocDigest
}

// repairQueue is how many repairs may wait; beyond it a digest's repair is
// dropped (logged): the next digest asks again.
const repairQueue = 16

// onDigest compares a peer's digest with this replica's view of the same
// documents and queues a repair of the buckets that differ.
func (r *Replicator) onDigest(ctx context.Context, evt *nostr.Event) error {
	msg, err := r.openDigest(evt)
	if err != nil || msg.Owner != r.cfg.Owner {
		return err
	}
	ok, err := mayWrite(ctx, r.cfg.Directory, evt.PubKey, r.cfg.Owner)
	if err != nil {
		return err
	}
	if !ok {
		return ErrUntrusted
	}
	held, err := r.holdings(ctx)
	if err != nil {
		return err
	}
	only := map[string]bool{}
	for uri := range msg.Schemas {
		only[uri] = true
	}
	docs, lacking := diffBuckets(r.sharedWith(held, evt.PubKey, only), msg.Schemas)
	r.stats.digestsIn.Add(1)
	r.stats.lacking.Store(int64(lacking))
	if lacking > 0 {
		r.log.Info("replicate: a peer holds ops this replica lacks; waiting for its repair",
			"peer", evt.PubKey[:12], "buckets", lacking)
	}
	if len(docs) == 0 {
		return nil
	}
	r.log.Info("replicate: anti-entropy: peer differs; sending repair", "peer", evt.PubKey[:12], "docs", len(docs))
	select {
	case r.repairs <- repairReq{peer: evt.PubKey, docs: docs}:
	default:
		r.log.Warn("replicate: repair queue full; the next digest asks again", "peer", evt.PubKey[:12])
	}
	return nil
}

// openDigest decrypts and decodes a digest addressed to this key.
func (r *Replicator) openDigest(evt *nostr.Event) (*digestMsg, error) {
	if !evt.CheckID() {
		return nil, fmt.Errorf("%w: id does not match", ErrBadEvent)
	}
	if ok, err := evt.CheckSignature(); err != nil || !ok {
		return nil, fmt.Errorf("%w: bad signature", ErrBadEvent)
	}
	plain, err := decryptFor(r.keys, evt)
	if err != nil {
		return nil, err
	}
	var msg digestMsg
	if err := json.Unmarshal([]byte(plain), &msg); err != nil {
		return nil, fmt.Errorf("%w: digest is not JSON", ErrBadEvent)
	}
	return &msg, nil
}

// diffBuckets returns the documents of mine in buckets whose hash differs
// from theirs, and how many buckets they have that mine has not (the
// sender holds documents this replica lacks).
func diffBuckets(mine bucketSet, theirs map[string]map[string]string) (docs []store.DocDigest, lacking int) {
	for uri, tb := range theirs {
		for k := range tb {
			i, err := strconv.Atoi(k)
			if err == nil && mine[uri][i] == nil {
				lacking++
			}
		}
	}
	for uri, bs := range mine {
		for i, b := range bs {
			if theirs[uri][strconv.Itoa(i)] != hex.EncodeToString(b.sum[:]) {
				docs = append(docs, b.docs...)
			}
		}
	}
	return docs, lacking
}

// repairer sends queued repairs until ctx ends.
func (r *Replicator) repairer(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case req := <-r.repairs:
			if err := r.repair(ctx, req); err != nil && ctx.Err() == nil {
				r.log.Warn("replicate: repair failed; the next digest asks again", "peer", req.peer[:12], "err", err)
			}
		}
	}
}

// repair sends req.peer every live op of req.docs, one compressed batch
// per (schema, scope) at a time, encrypted to the peer alone.
func (r *Replicator) repair(ctx context.Context, req repairReq) error {
	groups, order := map[batchHead][]store.Envelope{}, []batchHead{}
	for _, d := range req.docs {
		sch, ok := r.cfg.Schemas.Lookup(d.Schema)
		if !ok {
			continue
		}
		envs, err := r.st.DocOps(ctx, sch, d.Doc)
		if err != nil {
			return err
		}
		h := batchHead{NS: sch.Namespace.Prefix(), Schema: d.Schema, Scope: d.Scope, Owner: d.Owner,
			Vis: sch.Visibility, Replica: string(r.st.Replica())}
		if _, ok := groups[h]; !ok {
			order = append(order, h)
		}
		groups[h] = append(groups[h], envs...)
	}
	at := nostr.Now()
	for _, h := range order {
		evts, err := r.repairEvents(h, groups[h], req.peer, at)
		if err != nil {
			return err
		}
		if err := r.publishEverywhere(ctx, evts); err != nil {
			return err
		}
		r.stats.repairEvents.Add(int64(len(evts)))
		r.stats.repairOps.Add(int64(len(groups[h])))
	}
	return nil
}

// repairEvents packs envs into compressed batches for peer.
func (r *Replicator) repairEvents(h batchHead, envs []store.Envelope, peer string, at nostr.Timestamp) ([]*nostr.Event, error) {
	batches, tooLarge, err := packCompressed(envs, r.cfg.MaxBatchBytes, 8*r.cfg.MaxBatchBytes)
	if err != nil {
		return nil, err
	}
	out, err := chunkEvents(r.keys, r.log, h, nostr.Tags{{TagASM, asmRepair}}, tooLarge, []string{peer}, r.cfg.MaxBatchBytes, at)
	if err != nil {
		return nil, err
	}
	tags := append(h.tags(), nostr.Tag{TagASM, asmRepair}, nostr.Tag{TagCodec, repairCodec})
	for _, b := range batches {
		evt, err := sealRaw(r.keys, tags, b, peer, at)
		if err != nil {
			return nil, err
		}
		out = append(out, evt)
	}
	return out, nil
}

// packCompressed encodes envs as base64 of compressed JSON arrays, each at
// most limit bytes, packing up to budget bytes of JSON per batch and
// halving the budget for a batch that does not compress enough. Ops that
// fit in no batch come back in tooLarge (they travel in chunks).
func packCompressed(envs []store.Envelope, limit, budget int) (out [][]byte, tooLarge []store.Envelope, err error) {
	raw, tooLarge, err := encodeBatches(envs, budget)
	if err != nil {
		return nil, nil, err
	}
	for _, b := range raw {
		z, err := store.Compress(repairCodec, b)
		if err != nil {
			return nil, nil, err
		}
		enc := base64.StdEncoding.EncodeToString(z)
		if len(enc) <= limit {
			out = append(out, []byte(enc))
			continue
		}
		var part []store.Envelope
		if err := json.Unmarshal(b, &part); err != nil {
			return nil, nil, err
		}
		if len(part) == 1 { // one op that does not compress under limit
			tooLarge = append(tooLarge, part[0])
			continue
		}
		more, big, err := packCompressed(part, limit, budget/2)
		if err != nil {
			return nil, nil, err
		}
		out, tooLarge = append(out, more...), append(tooLarge, big...)
	}
	return out, tooLarge, nil
}

// uncompress reverses packCompressed for one batch.
func uncompress(codec, content string) (string, error) {
	z, err := base64.StdEncoding.DecodeString(content)
	if err != nil {
		return "", fmt.Errorf("%w: repair batch is not base64", ErrBadEvent)
	}
	raw, err := store.Decompress(codec, z)
	if err != nil {
		return "", fmt.Errorf("%w: repair batch: %w", ErrBadEvent, err)
	}
	return string(raw), nil
}
