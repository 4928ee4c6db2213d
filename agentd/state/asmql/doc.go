// Package asmql is ASM-QL, the query language of the Agent State Model
// (Nuwa NIP-8): a JSON AST that selects, filters, orders and pages the
// materialised documents of one schema, compiled to a single SQLite
// statement over the store's docs table.
//
//	{"select":["id","title"], "from":"did:nuwa:state:note#v1",
//	 "where":{"tags":{"$contains":"meeting"}},
//	 "order":[{"field":"updatedAt","direction":"desc"}], "limit":20, "cursor":"..."}
//
// ParseLimits reads a query strictly (unknown keys and operators, wrong types and
// bad field paths are refused with an *Error carrying a code and a JSON
// pointer) and bounds its cost while decoding. Exec compiles a Query into
// SQL in which every value is a bound argument and every field path a validated
// json_extract(doc, '$.path') literal, the form of the store's expression
// indexes, runs it under a timeout and returns one page and an opaque
// cursor for the next.
//
// Pagination is keyset pagination over the order keys plus id: a page never
// repeats a row and never skips a row whose keys did not change, whatever is
// inserted or updated between pages.
//
// The package imports no driver: it runs on any *sql.DB whose driver is
// SQLite 3.38 or later with JSON functions (modernc.org/sqlite here). The
// caller resolves From to a Target: the namespace's table and a trusted base
// predicate (schema, tombstones, visibility). See docs/ASMQL.md for the
// grammar, the exact semantics of each operator, the SQL they become, the
// cursor format and measured figures.
//
// # Use
//
//	q, err := asmql.ParseLimits(body, asmql.Limits{})
//	if err != nil {
//		return err // *asmql.Error: INVALID_QUERY or QUERY_TOO_COMPLEX, safe to show
//	}
//	t := asmql.Target{Table: table, Base: "schema_uri = ? AND deleted = 0", BaseArgs: []any{q.From}}
//	res, err := asmql.Exec(ctx, db, q, t, asmql.Limits{})
//	// res.Rows: [{"id": ..., "title": ...}, ...]; res.NextCursor: "" or the next page's cursor
package asmql
