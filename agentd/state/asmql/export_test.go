package asmql

// Test-only entry points: the binary parses with ParseLimits and runs with Exec.

// Parse decodes an ASM-QL query with the default Limits (ParseLimits).
func Parse(data []byte) (*Query, error) {
	return ParseLimits(data, Limits{})
}

// Compile validates q and translates it to one SQL statement and its
// arguments, exactly as Exec runs it. Every value is a bound argument; field
// paths are validated and written as json_extract(doc, '$.path') literals.
func Compile(q *Query, t Target, lim Limits) (sqlText string, args []any, err error) {
	p, err := compile(q, t, lim.withDefaults())
	if err != nil {
		return "", nil, err
	}
	return p.sql, p.args, nil
}

// MarshalJSON writes the query in canonical ASM-QL: explicit operators
// ({"f":{"$eq":v}}), explicit $and for implicit ANDs, directions spelled out.
// Parse reads it back to an equal query.
func (q *Query) MarshalJSON() ([]byte, error) {
	b := []byte("{")
	add := func(key string, v []byte) {
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = append(append(b, mustJSON(key)...), ':')
		b = append(b, v...)
	}
	if len(q.Select) > 0 {
		add("select", mustJSON(q.Select))
	}
	add("from", mustJSON(q.From))
	if q.Where != nil {
		add("where", exprJSON(q.Where))
	}
	if len(q.Order) > 0 {
		add("order", orderJSON(q.Order))
	}
	if q.Limit != 0 {
		add("limit", mustJSON(q.Limit))
	}
	if q.Cursor != "" {
		add("cursor", mustJSON(q.Cursor))
	}
	return append(b, '}'), nil
}
