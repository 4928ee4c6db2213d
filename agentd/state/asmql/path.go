package asmql

import "strings"

// colKind is the SQL type of a metadata column.
type colKind int

const (
	colNone colKind = iota // a document path, not a column
	colText                // id
	colInt                 // created_at, updated_at
)

// field is a resolved field reference: a metadata column or a path into the
// document. Paths are validated before they are written into SQL text.
type field struct {
	col  string  // column name for a pseudo-field
	kind colKind // colNone for document paths
	path string  // SQLite JSON path for document fields, e.g. $.a.b[0]
}

// pseudo maps the top-level pseudo-fields to their columns.
var pseudo = map[string]field{
	"id":         {col: "id", kind: colText},
	"createdAt":  {col: "created_at", kind: colInt},
	"created_at": {col: "created_at", kind: colInt},
	"updatedAt":  {col: "updated_at", kind: colInt},
	"updated_at": {col: "updated_at", kind: colInt},
}

// parseField resolves a field string. "id", "createdAt"/"created_at" and
// "updatedAt"/"updated_at" name the columns; "$.x" names the document's own
// top-level x even when x is one of those; anything else is a dotted path.
func parseField(s string) (field, bool) {
	if f, ok := pseudo[s]; ok {
		return f, true
	}
	s = strings.TrimPrefix(s, "$.")
	if s == "" || len(s) > maxPathLen {
		return field{}, false
	}
	segs := strings.Split(s, ".")
	if len(segs) > maxSegments || !isIdent(segs[0]) {
		return field{}, false
	}
	var b strings.Builder
	b.WriteString("$")
	for _, seg := range segs {
		switch {
		case isIdent(seg):
			b.WriteString("." + seg)
		case isIndex(seg):
			b.WriteString("[" + seg + "]")
		default:
			return field{}, false
		}
	}
	return field{path: b.String()}, true
}

// isIdent reports whether s matches ^[A-Za-z_][A-Za-z0-9_]*$.
func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range []byte(s) {
		letter := c == '_' || (c|0x20) >= 'a' && (c|0x20) <= 'z'
		if !letter && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// isIndex reports whether s is a canonical non-negative integer of at most
// 9 digits ("0", "12", not "012").
func isIndex(s string) bool {
	if s == "" || len(s) > 9 || (s[0] == '0' && len(s) > 1) {
		return false
	}
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// value is the SQL expression of the field's value: the column, or
// json_extract(doc, '<path>') — the exact form of the store's expression
// indexes, so SQLite can use them.
func (f field) value() string {
	if f.kind != colNone {
		return f.col
	}
	return "json_extract(doc, '" + f.path + "')"
}

// jtype is the field's JSON type: 'null', 'true', 'false', 'integer',
// 'real', 'text', 'array', 'object', or NULL when the path is absent.
func (f field) jtype() string {
	return "json_type(doc, '" + f.path + "')"
}

// raw is the field as JSON text (NULL when absent), for projection.
func (f field) raw() string {
	if f.kind != colNone {
		return f.col
	}
	return "(doc -> '" + f.path + "')"
}
