package store

import (
	"bytes"
	"compress/gzip"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/zstd"

	"github.com/agentnode/agentnode/agentd/state/schema"
)

// CodecNone stores snapshots uncompressed (schemas without x-compression).
const CodecNone = "none"

// maxSnapshotBytes bounds a decompressed snapshot (zip-bomb guard).
const maxSnapshotBytes = 1 << 30

// snapshot is a document's ops folded into one compressed blob.
type snapshot struct {
	upto  int64 // the greatest op seq it holds
	codec string
	envs  []Envelope
}

// Compress encodes data with an x-compression codec: br (brotli), zstd or
// gzip; "" or "none" returns data as is.
func Compress(codec string, data []byte) ([]byte, error) {
	var buf bytes.Buffer
	var w io.WriteCloser
	switch codec {
	case "", CodecNone:
		return data, nil
	case schema.Gzip:
		w = gzip.NewWriter(&buf)
	case schema.Brotli:
		w = brotli.NewWriterLevel(&buf, brotli.DefaultCompression)
	case schema.Zstd:
		enc, err := zstd.NewWriter(nil)
		if err != nil {
			return nil, err
		}
		defer enc.Close()
		return enc.EncodeAll(data, nil), nil
	default:
		return nil, fmt.Errorf("store: unknown codec %q", codec)
	}
	if _, err := w.Write(data); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Decompress reverses Compress.
func Decompress(codec string, data []byte) ([]byte, error) {
	var r io.Reader
	switch codec {
	case "", CodecNone:
		return data, nil
	case schema.Gzip:
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, err
		}
		r = zr
	case schema.Brotli:
		r = brotli.NewReader(bytes.NewReader(data))
	case schema.Zstd:
		dec, err := zstd.NewReader(bytes.NewReader(data), zstd.WithDecoderConcurrency(1))
		if err != nil {
			return nil, err
		}
		defer dec.Close()
		r = dec
	default:
		return nil, fmt.Errorf("store: unknown codec %q", codec)
	}
	out, err := io.ReadAll(io.LimitReader(r, maxSnapshotBytes+1))
	if err == nil && len(out) > maxSnapshotBytes {
		err = errors.New("store: snapshot too large")
	}
	return out, err
}

func readSnapshot(ctx context.Context, q querier, t tables, uri, id string) (*snapshot, error) {
	var snap snapshot
	var data []byte
	err := q.QueryRowContext(ctx, fmt.Sprintf(`SELECT upto, codec, data FROM %s WHERE schema_uri = ? AND doc_id = ?`, t.snaps),
		uri, id).Scan(&snap.upto, &snap.codec, &data)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("store: read snapshot: %w", err)
	}
	raw, err := Decompress(snap.codec, data)
	if err != nil {
		return nil, fmt.Errorf("store: decompress snapshot %s %s: %w", uri, id, err)
	}
	if err := json.Unmarshal(raw, &snap.envs); err != nil {
		return nil, fmt.Errorf("store: decode snapshot %s %s: %w", uri, id, err)
	}
	return &snap, nil
}

// writeSnapshot stores envs (with their Seq) as the document's snapshot.
func writeSnapshot(ctx context.Context, tx *sql.Tx, t tables, uri, id, codec string, envs []Envelope, now int64) (SnapshotInfo, error) {
	info := SnapshotInfo{Codec: codec, Ops: len(envs)}
	for _, e := range envs {
		info.Upto = max(info.Upto, e.Seq)
	}
	raw, err := json.Marshal(envs)
	if err != nil {
		return info, fmt.Errorf("store: encode snapshot: %w", err)
	}
	data, err := Compress(codec, raw)
	if err != nil {
		return info, fmt.Errorf("store: compress snapshot: %w", err)
	}
	info.RawSize, info.Size = len(raw), len(data)
	_, err = tx.ExecContext(ctx, fmt.Sprintf(`INSERT INTO %s (schema_uri, doc_id, upto, codec, raw_size, data, created_at)
	  VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (schema_uri, doc_id) DO UPDATE SET upto = excluded.upto,
	  codec = excluded.codec, raw_size = excluded.raw_size, data = excluded.data, created_at = excluded.created_at`, t.snaps),
		uri, id, info.Upto, codec, info.RawSize, data, now)
	if err != nil {
		return info, fmt.Errorf("store: write snapshot: %w", err)
	}
	return info, nil
}

// SnapshotInfo describes a written snapshot.
type SnapshotInfo struct {
	Codec   string `json:"codec"`
	Ops     int    `json:"ops"`
	Upto    int64  `json:"upto"`
	RawSize int    `json:"raw_size"`
	Size    int    `json:"size"`
}

// Snapshot folds every logged op of a document into one compressed
// snapshot (codec: the schema's x-compression, else none) and clears their
// bodies from the op log; the op rows stay as the idempotence record and
// replication cursor. Loading, history and OpsSince read through the
// snapshot, so nothing changes for readers.
func (s *Store) Snapshot(ctx context.Context, sch *schema.Schema, id string) (SnapshotInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return SnapshotInfo{}, ErrClosed
	}
	t, codec := tablesOf(sch), sch.Compression
	if codec == "" {
		codec = CodecNone
	}
	var info SnapshotInfo
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		envs, err := loadEnvelopes(ctx, tx, t, sch.URI, id)
		if err != nil || len(envs) == 0 {
			return err
		}
		if info, err = writeSnapshot(ctx, tx, t, sch.URI, id, codec, envs, s.cfg.Now().UnixMilli()); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, fmt.Sprintf(`UPDATE %s SET body = NULL
		  WHERE schema_uri = ? AND doc_id = ? AND seq <= ? AND body IS NOT NULL`, t.ops), sch.URI, id, info.Upto)
		return err
	})
	return info, err
}

// LiveOps counts a document's op rows not yet folded into a snapshot.
func (s *Store) LiveOps(ctx context.Context, sch *schema.Schema, id string) (int, error) {
	var n int
	err := s.db.QueryRowContext(ctx, fmt.Sprintf(`SELECT count(*) FROM %s
	  WHERE schema_uri = ? AND doc_id = ? AND body IS NOT NULL AND gone = 0`, tablesOf(sch).ops), sch.URI, id).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("store: count ops: %w", err)
	}
	return n, nil
}

func decodeEnvelope(body string, e *Envelope) error {
	if err := json.Unmarshal([]byte(body), e); err != nil {
		return fmt.Errorf("store: decode op: %w", err)
	}
	return nil
}
