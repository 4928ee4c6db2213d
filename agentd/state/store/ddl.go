package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/agentnode/agentnode/agentd/state/schema"
)

// metaDDL creates the store-wide tables: settings (the replica id), the
// registered schemas and the namespaces that have tables.
const metaDDL = `
CREATE TABLE IF NOT EXISTS asm_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS asm_schemas (
  uri TEXT PRIMARY KEY, capability TEXT NOT NULL, raw TEXT NOT NULL, registered_at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS asm_namespaces (prefix TEXT PRIMARY KEY, kind TEXT NOT NULL, name TEXT NOT NULL);
`

// namespaceDDL creates one namespace's tables; %[1]s is the validated
// prefix. Documents are keyed by (schema_uri, id). The op log has a local
// sequence (replication cursor), one row per op, unique per document and op
// id so redelivery is a no-op; body is NULL once the op is folded into a
// snapshot or expired (gone = 1). Snapshots hold a document's ops
// compressed.
const namespaceDDL = `
CREATE TABLE IF NOT EXISTS %[1]s_docs (
  schema_uri TEXT NOT NULL, id TEXT NOT NULL, doc TEXT NOT NULL,
  scope TEXT NOT NULL, owner TEXT NOT NULL, agent TEXT NOT NULL, visibility TEXT NOT NULL,
  created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,
  deleted INTEGER NOT NULL DEFAULT 0, size INTEGER,
  PRIMARY KEY (schema_uri, id));
CREATE INDEX IF NOT EXISTS %[1]s_docs_owner ON %[1]s_docs (schema_uri, owner, agent);
CREATE INDEX IF NOT EXISTS %[1]s_docs_updated ON %[1]s_docs (schema_uri, updated_at);
CREATE TABLE IF NOT EXISTS %[1]s_ops (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  scope TEXT NOT NULL, schema_uri TEXT NOT NULL, doc_id TEXT NOT NULL,
  op_id TEXT NOT NULL, replica TEXT NOT NULL, counter INTEGER NOT NULL, ctr_end INTEGER NOT NULL,
  wall INTEGER NOT NULL, logical INTEGER NOT NULL,
  action TEXT NOT NULL, body TEXT, gone INTEGER NOT NULL DEFAULT 0,
  UNIQUE (schema_uri, doc_id, op_id));
CREATE INDEX IF NOT EXISTS %[1]s_ops_scope ON %[1]s_ops (scope, seq);
CREATE INDEX IF NOT EXISTS %[1]s_ops_replica ON %[1]s_ops (replica, ctr_end);
CREATE TABLE IF NOT EXISTS %[1]s_snaps (
  schema_uri TEXT NOT NULL, doc_id TEXT NOT NULL, upto INTEGER NOT NULL,
  codec TEXT NOT NULL, raw_size INTEGER NOT NULL, data BLOB NOT NULL, created_at INTEGER NOT NULL,
  PRIMARY KEY (schema_uri, doc_id));
`

// Prepare creates sch's namespace tables and its expression indexes. It is
// idempotent and cheap once done.
func (s *Store) Prepare(ctx context.Context, sch *schema.Schema) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.prepare(ctx, sch)
}

func (s *Store) prepare(ctx context.Context, sch *schema.Schema) error {
	if s.closed {
		return ErrClosed
	}
	p := sch.Namespace.Prefix()
	key := p + "\x00" + sch.URI
	if s.prepared[key] {
		return nil
	}
	if !schema.ValidPrefix(p) {
		return fmt.Errorf("store: invalid table prefix %q", p)
	}
	ddl := fmt.Sprintf(namespaceDDL, p) + indexDDL(p, sch.Indexes)
	if _, err := s.db.ExecContext(ctx, ddl); err != nil {
		return fmt.Errorf("store: create tables %s: %w", p, err)
	}
	const q = `INSERT INTO asm_namespaces (prefix, kind, name) VALUES (?, ?, ?) ON CONFLICT DO NOTHING`
	if _, err := s.db.ExecContext(ctx, q, p, sch.Namespace.Kind, sch.Namespace.Name); err != nil {
		return fmt.Errorf("store: record namespace: %w", err)
	}
	s.prepared[key] = true
	return nil
}

// indexDDL creates one expression index per schema index:
// (schema_uri, json_extract(doc, '$.path'), id). ASM-QL orders by the
// field with id as the tiebreaker, so the trailing id lets a first page read
// in index order and a cursor page seek (checked with EXPLAIN QUERY PLAN in
// asmql's plan tests).
func indexDDL(prefix string, ixs []schema.Index) string {
	var b strings.Builder
	for _, ix := range ixs {
		sum := sha256.Sum256([]byte(strings.Join(ix.Path, ".")))
		name := prefix + "_ixo_" + hex.EncodeToString(sum[:6])
		fmt.Fprintf(&b, "CREATE INDEX IF NOT EXISTS %s ON %s_docs (schema_uri, %s, id);\n", name, prefix, ix.Expr())
	}
	return b.String()
}

// Namespaces returns the table prefixes that have tables, sorted.
func (s *Store) Namespaces(ctx context.Context) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT prefix FROM asm_namespaces ORDER BY prefix`)
	if err != nil {
		return nil, fmt.Errorf("store: list namespaces: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			return nil, err
		}
		if schema.ValidPrefix(p) {
			out = append(out, p)
		}
	}
	return out, rows.Err()
}

// SchemaRow is a registered schema as persisted.
type SchemaRow struct {
	URI, Capability string
	Raw             []byte
}

// SaveSchema persists a registered schema so that the next Open can
// register it again.
func (s *Store) SaveSchema(ctx context.Context, sch *schema.Schema) error {
	const q = `INSERT INTO asm_schemas (uri, capability, raw, registered_at) VALUES (?, ?, ?, ?)
	  ON CONFLICT (uri) DO UPDATE SET capability = excluded.capability, raw = excluded.raw`
	_, err := s.db.ExecContext(ctx, q, sch.URI, sch.Capability, string(sch.Raw), s.cfg.Now().UnixMilli())
	if err != nil {
		return fmt.Errorf("store: save schema: %w", err)
	}
	return nil
}

// Schemas returns the persisted schemas in registration order.
func (s *Store) Schemas(ctx context.Context) ([]SchemaRow, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT uri, capability, raw FROM asm_schemas ORDER BY registered_at, uri`)
	if err != nil {
		return nil, fmt.Errorf("store: list schemas: %w", err)
	}
	defer rows.Close()
	var out []SchemaRow
	for rows.Next() {
		var r SchemaRow
		var raw string
		if err := rows.Scan(&r.URI, &r.Capability, &raw); err != nil {
			return nil, err
		}
		r.Raw = []byte(raw)
		out = append(out, r)
	}
	return out, rows.Err()
}
