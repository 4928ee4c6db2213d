package asmql

import "encoding/json"

// The canonical JSON of a query's parts, for cursors' shape hash.

// exprJSON is the canonical JSON of an expression ("null" for nil).
func exprJSON(e Expr) []byte {
	switch e := e.(type) {
	case And:
		return logicalJSON(keyAnd, e)
	case Or:
		return logicalJSON(keyOr, e)
	case Not:
		return objJSON(keyNot, exprJSON(e.X))
	case Cmp:
		return objJSON(e.Field, objJSON(string(e.Op), valueJSON(e.Value)))
	}
	return []byte("null")
}

func logicalJSON(key string, es []Expr) []byte {
	b := []byte("[")
	for i, e := range es {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, exprJSON(e)...)
	}
	return objJSON(key, append(b, ']'))
}

// objJSON writes {"key":v}.
func objJSON(key string, v []byte) []byte {
	b := append([]byte("{"), mustJSON(key)...)
	b = append(b, ':')
	b = append(b, v...)
	return append(b, '}')
}

// valueJSON writes an operand, numbers normalised as Parse reads them.
func valueJSON(v any) []byte {
	if list, ok := v.([]any); ok {
		out := make([]json.RawMessage, len(list))
		for i, x := range list {
			out[i] = valueJSON(x)
		}
		return mustJSON(out)
	}
	if s, ok := scalar(v); ok {
		return mustJSON(s)
	}
	return mustJSON(v)
}

// orderJSON writes the order list with explicit directions.
func orderJSON(order []Order) []byte {
	type o struct {
		Field     string `json:"field"`
		Direction string `json:"direction"`
	}
	out := make([]o, len(order))
	for i, x := range order {
		out[i] = o(x)
		if out[i].Direction == "" {
			out[i].Direction = "asc"
		}
	}
	return mustJSON(out)
}

// mustJSON marshals values that cannot fail (validated queries); an
// unmarshalable value becomes null, which validation refuses anyway.
func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return []byte("null")
	}
	return b
}
