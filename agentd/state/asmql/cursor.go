package asmql

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"math"
	"strconv"
)

// cursorVersion is the cursor format version.
const cursorVersion = 1

// cursorData is the JSON inside a cursor: version, query shape hash, and the
// last returned row's sort-key values (id included) as SQLite gave them.
type cursorData struct {
	V int               `json:"v"`
	H string            `json:"h"`
	K []json.RawMessage `json:"k"`
}

// shapeHash binds cursors to a table and a query shape (from, where, order).
// Limit and select may change between pages.
func shapeHash(q *Query, table string) string {
	h := sha256.New()
	for _, part := range [][]byte{[]byte(table), []byte(q.From), exprJSON(q.Where), orderJSON(q.Order)} {
		h.Write([]byte(strconv.Itoa(len(part)) + ":"))
		h.Write(part)
	}
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:12])
}

// encodeCursor makes the cursor that continues after a row with key values vals.
func encodeCursor(hash string, vals []any) (string, error) {
	c := cursorData{V: cursorVersion, H: hash, K: make([]json.RawMessage, len(vals))}
	for i, v := range vals {
		raw, err := encodeKey(v)
		if err != nil {
			return "", err
		}
		c.K[i] = raw
	}
	b, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// encodeKey writes a key value: null, an integer, a string, or {"f":"<float>"}
// (floats as exact, round-tripping text; JSON numbers could not hold ±Inf).
func encodeKey(v any) (json.RawMessage, error) {
	switch x := v.(type) {
	case float64:
		return json.Marshal(map[string]string{"f": strconv.FormatFloat(x, 'g', -1, 64)})
	case []byte:
		return json.Marshal(string(x))
	default:
		return json.Marshal(x) // nil, int64, string
	}
}

// decodeCursor checks a cursor against the query's hash and key count and
// returns its key values.
func decodeCursor(s, hash string, nkeys int) ([]any, error) {
	b, err := base64.RawURLEncoding.Strict().DecodeString(s)
	if err != nil {
		return nil, badCursor("not base64url")
	}
	var c cursorData
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil || dec.More() {
		return nil, badCursor("malformed")
	}
	if c.V != cursorVersion || c.H != hash {
		return nil, badCursor("issued for another query")
	}
	if len(c.K) != nkeys {
		return nil, badCursor("wrong number of keys")
	}
	vals := make([]any, nkeys)
	for i, raw := range c.K {
		if vals[i], err = decodeKey(raw); err != nil {
			return nil, err
		}
	}
	return vals, nil
}

// decodeKey reads one key value written by encodeKey.
func decodeKey(raw json.RawMessage) (any, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, badCursor("malformed key")
	}
	switch raw[0] {
	case 'n':
		return nil, nil
	case '"':
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil, badCursor("malformed key")
		}
		return s, nil
	case '{':
		return decodeFloat(raw)
	}
	i, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		return nil, badCursor("malformed key")
	}
	return i, nil
}

func decodeFloat(raw json.RawMessage) (any, error) {
	var m map[string]string
	if json.Unmarshal(raw, &m) != nil || len(m) != 1 {
		return nil, badCursor("malformed key")
	}
	f, err := strconv.ParseFloat(m["f"], 64)
	if err != nil || math.IsNaN(f) {
		return nil, badCursor("malformed key")
	}
	return f, nil
}

// keyset writes the predicate "row sorts after the cursor row, on the same
// side of the first key's NULL boundary" (build adds the other side when it
// follows). It is a bound on the first key, which lets an index seek to the
// cursor, AND the lexicographic OR-chain: each step "equal on the keys
// before, strictly after on this one". NULL (absent) sorts first ascending
// and last descending, as SQLite sorts it.
func (w *sqlw) keyset(keys []sortKey, vals []any) {
	w.str("(")
	w.seek(keys[0], vals[0])
	w.str(" AND (")
	first := 0
	if vals[0] == nil {
		first = 1 // nothing sorts strictly after NULL on its own side
	}
	for i := first; i < len(keys); i++ {
		w.sep(i-first, " OR ")
		w.str("(")
		for j := 0; j < i; j++ {
			w.str(keys[j].f.value(), " IS ")
			w.bind(vals[j])
			w.str(" AND ")
		}
		w.after(keys[i], vals[i], i == 0)
		w.str(")")
	}
	w.str("))")
}

// seek writes the first key's bound: NULL stays NULL; otherwise >= v
// ascending, <= v descending (which also excludes NULL).
func (w *sqlw) seek(k sortKey, v any) {
	e := k.f.value()
	switch {
	case v == nil:
		w.str(e, " IS NULL")
	case k.desc:
		w.str(e, " <= ")
		w.bind(v)
	default:
		w.str(e, " >= ")
		w.bind(v)
	}
}

// after writes "key sorts strictly after v" for a non-NULL v, or for a
// NULL v on a key other than the first. With sameSide, only values on v's
// side of the NULL boundary count.
func (w *sqlw) after(k sortKey, v any, sameSide bool) {
	e := k.f.value()
	switch {
	case v == nil && k.desc:
		w.str("0")
	case v == nil:
		w.str(e, " IS NOT NULL")
	case !k.desc:
		w.str(e, " > ")
		w.bind(v)
	case sameSide || k.f.kind != colNone: // columns are NOT NULL
		w.str(e, " < ")
		w.bind(v)
	default:
		w.str("(", e, " < ")
		w.bind(v)
		w.str(" OR ", e, " IS NULL)")
	}
}
