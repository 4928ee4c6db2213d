package state

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"strings"

	"github.com/agentnode/agentnode/agentd/state/asmql"
	"github.com/agentnode/agentnode/agentd/state/crdt"
	"github.com/agentnode/agentnode/agentd/state/schema"
	"github.com/agentnode/agentnode/agentd/state/store"
)

// Get returns one document the caller can see (state.query permission).
func (r *Runtime) Get(ctx context.Context, c Caller, schemaURI, id string) (*Document, error) {
	s, err := r.resolve(ctx, c, schemaURI, VerbQuery)
	if err != nil {
		return nil, err
	}
	if err := r.EnsureCore(ctx, c); err != nil {
		return nil, err
	}
	d, err := r.st.Get(ctx, s, id, c.readFilter(s, false))
	if err != nil {
		return nil, r.internal(err)
	}
	doc := fromStore(d)
	in, err := r.st.Inspect(ctx, s, id)
	if err != nil {
		return nil, r.internal(err)
	}
	doc.Incomplete, doc.Concurrent = in.Missing, in.Concurrent
	return doc, nil
}

// Query is state.query: it runs an ASM-QL query over the documents of its
// "from" schema that the caller can see (visibility, memory scope, not
// deleted), as one page. Bad queries are INVALID_INPUT, slow ones TIMEOUT.
func (r *Runtime) Query(ctx context.Context, c Caller, query []byte) (*QueryResult, error) {
	if !c.Can(VerbQuery) {
		return nil, newError(CodePermissionDenied, "%s not granted", VerbQuery)
	}
	q, err := asmql.ParseLimits(unwrapQuery(query), r.opts.Limits)
	if err != nil {
		return nil, coded(err)
	}
	s, err := r.resolve(ctx, c, q.From, VerbQuery)
	if err != nil {
		return nil, err
	}
	if err := r.EnsureCore(ctx, c); err != nil {
		return nil, err
	}
	f := c.readFilter(s, false)
	docs, _, _ := s.Namespace.Tables()
	t := asmql.Target{Table: docs, Base: "schema_uri = ? AND " + f.SQL, BaseArgs: append([]any{s.URI}, f.Args...)}
	res, err := asmql.Exec(ctx, r.st.DB(), q, t, r.opts.Limits)
	if err != nil {
		return nil, r.internal(err)
	}
	out := &QueryResult{Rows: res.Rows, NextCursor: res.NextCursor}
	if out.Concurrent, err = r.concurrentRows(ctx, s, out.Rows, mvFields(s, q.Select)); err != nil {
		return nil, r.internal(err)
	}
	return out, nil
}

// mvFields are the schema's top-level mv_register fields that a query
// selecting sel returns (all of them when sel is empty; a selected path
// counts for its top-level field).
func mvFields(s *schema.Schema, sel []string) map[string]bool {
	out := map[string]bool{}
	for f, c := range s.Fields {
		if c == crdt.TypeMVRegister {
			out[f] = len(sel) == 0
		}
	}
	for _, p := range sel {
		top, _, _ := strings.Cut(strings.TrimPrefix(p, "$."), ".")
		if _, ok := out[top]; ok {
			out[top] = true
		}
	}
	maps.DeleteFunc(out, func(_ string, keep bool) bool { return !keep })
	return out
}

// concurrentRows returns, per row's document id, the concurrent values of
// the fields (of those given) that hold several.
func (r *Runtime) concurrentRows(ctx context.Context, s *schema.Schema, rows []map[string]any, fields map[string]bool) (map[string]map[string][]json.RawMessage, error) {
	if len(fields) == 0 {
		return nil, nil
	}
	var out map[string]map[string][]json.RawMessage
	for _, row := range rows {
		id, _ := row["id"].(string)
		in, err := r.st.Inspect(ctx, s, id)
		if errors.Is(err, store.ErrNotFound) { // deleted since the query
			continue
		}
		if err != nil {
			return nil, err
		}
		maps.DeleteFunc(in.Concurrent, func(f string, _ []json.RawMessage) bool { return !fields[f] })
		if len(in.Concurrent) == 0 {
			continue
		}
		if out == nil {
			out = map[string]map[string][]json.RawMessage{}
		}
		out[id] = in.Concurrent
	}
	return out, nil
}

// History returns a document's op log (state.query permission): its
// create marker, CRDT ops and tombstone, in log order. Tombstoned documents
// keep their history; hard-deleted ones have none (NOT_FOUND).
func (r *Runtime) History(ctx context.Context, c Caller, schemaURI, id string) ([]store.Envelope, error) {
	s, err := r.resolve(ctx, c, schemaURI, VerbQuery)
	if err != nil {
		return nil, err
	}
	if _, err := r.st.Get(ctx, s, id, c.readFilter(s, true)); err != nil {
		return nil, r.internal(err)
	}
	envs, err := r.st.History(ctx, s, id)
	if err != nil {
		return nil, r.internal(err)
	}
	return envs, nil
}
