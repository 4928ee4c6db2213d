package asmql

import (
	"math"
	"strconv"
	"strings"
)

// ParseLimits decodes an ASM-QL query strictly: unknown keys and operators,
// duplicate keys, wrong types, bad field paths and trailing data are
// INVALID_QUERY; input larger than lim.MaxBytes, JSON nested deeper than the
// expression depth allows, or a query over any other bound is
// QUERY_TOO_COMPLEX. Every error is an *Error with the JSON pointer of the
// offending part.
func ParseLimits(data []byte, lim Limits) (*Query, error) {
	lim = lim.withDefaults()
	if len(data) > lim.MaxBytes {
		return nil, tooComplex("", "query larger than "+strconv.Itoa(lim.MaxBytes)+" bytes")
	}
	// An expression level costs at most two JSON levels ({"$and":[...]});
	// the query object, a field's operator object and an $in list add three.
	o, err := decodeObject(data, 2*lim.MaxDepth+4)
	if err != nil {
		return nil, err
	}
	q, err := buildQuery(o)
	if err != nil {
		return nil, err
	}
	if err := validate(q, lim); err != nil {
		return nil, err
	}
	return q, nil
}

// buildQuery maps the top-level keys onto a Query.
func buildQuery(o *object) (*Query, error) {
	q := &Query{}
	for i, key := range o.keys {
		if err := q.set(key, o.vals[i]); err != nil {
			return nil, err
		}
	}
	return q, nil
}

// set assigns one top-level key.
func (q *Query) set(key string, v any) error {
	path := ptr("", key)
	var err error
	switch key {
	case "select":
		q.Select, err = stringList(v, path)
	case "from":
		q.From, err = str(v, path)
	case "where":
		q.Where, err = where(v, path)
	case "order":
		q.Order, err = orderList(v, path)
	case "limit":
		q.Limit, err = limit(v, path)
	case "cursor":
		q.Cursor, err = str(v, path)
	default:
		err = invalid(path, "unknown key")
	}
	return err
}

func str(v any, path string) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", invalid(path, "must be a string")
	}
	return s, nil
}

func stringList(v any, path string) ([]string, error) {
	a, ok := v.([]any)
	if !ok {
		return nil, invalid(path, "must be an array of strings")
	}
	return each(a, path, str)
}

// each builds every element of a with build, each at its index's pointer.
func each[T any](a []any, path string, build func(any, string) (T, error)) ([]T, error) {
	out := make([]T, len(a))
	for i, x := range a {
		e, err := build(x, ptr(path, strconv.Itoa(i)))
		if err != nil {
			return nil, err
		}
		out[i] = e
	}
	return out, nil
}

// conjunction builds every key of o with build; several keys mean AND in
// the order written.
func conjunction(o *object, path string, build func(key string, v any, path string) (Expr, error)) (Expr, error) {
	parts := make(And, len(o.keys))
	for i, key := range o.keys {
		e, err := build(key, o.vals[i], ptr(path, key))
		if err != nil {
			return nil, err
		}
		parts[i] = e
	}
	if len(parts) == 1 {
		return parts[0], nil
	}
	return parts, nil
}

func limit(v any, path string) (int, error) {
	n, ok := v.(int64)
	if !ok {
		return 0, invalid(path, "must be an integer of at most 63 bits")
	}
	if n < 0 {
		return 0, invalid(path, "limit must not be negative")
	}
	return int(min(n, 1<<31-1)), nil
}

func orderList(v any, path string) ([]Order, error) {
	a, ok := v.([]any)
	if !ok {
		return nil, invalid(path, "must be an array of {field, direction}")
	}
	return each(a, path, order)
}

func order(v any, path string) (Order, error) {
	o, ok := v.(*object)
	if !ok {
		return Order{}, invalid(path, "must be an object {field, direction}")
	}
	var out Order
	for i, key := range o.keys {
		p := ptr(path, key)
		var err error
		switch key {
		case "field":
			out.Field, err = str(o.vals[i], p)
		case "direction":
			out.Direction, err = str(o.vals[i], p)
		default:
			err = invalid(p, "unknown key")
		}
		if err != nil {
			return Order{}, err
		}
	}
	return out, nil
}

// where builds the top-level where expression; {} matches everything.
func where(v any, path string) (Expr, error) {
	if o, ok := v.(*object); ok && len(o.keys) == 0 {
		return nil, nil
	}
	return expression(v, path)
}

// expression builds a where-level object: logical operators and fields,
// several keys meaning AND in the order written.
func expression(v any, path string) (Expr, error) {
	o, ok := v.(*object)
	if !ok {
		return nil, invalid(path, "must be an object")
	}
	if len(o.keys) == 0 {
		return nil, invalid(path, "empty expression")
	}
	return conjunction(o, path, clause)
}

// clause builds one key of a where-level object.
func clause(key string, v any, path string) (Expr, error) {
	switch {
	case key == keyAnd || key == keyOr:
		return logical(key, v, path)
	case key == keyNot:
		x, err := expression(v, path)
		return Not{X: x}, err
	case strings.HasPrefix(key, "$") && !strings.HasPrefix(key, "$."):
		return nil, invalid(path, "unknown operator")
	}
	if _, ok := parseField(key); !ok {
		return nil, invalid(path, "bad field path")
	}
	return fieldClause(key, v, path)
}

// logical builds $and / $or from a non-empty array of expressions.
func logical(key string, v any, path string) (Expr, error) {
	a, ok := v.([]any)
	if !ok || len(a) == 0 {
		return nil, invalid(path, key+" takes a non-empty array")
	}
	es, err := each(a, path, expression)
	if err != nil {
		return nil, err
	}
	if key == keyAnd {
		return And(es), nil
	}
	return Or(es), nil
}

// fieldClause builds {"field": value} (implicit $eq) or {"field": {ops}}.
func fieldClause(name string, v any, path string) (Expr, error) {
	switch x := v.(type) {
	case *object:
		return operators(name, x, path)
	case []any:
		return nil, invalid(path, "array values are not comparable; use $in or $contains")
	}
	c := Cmp{Field: name, Op: OpEq, Value: v}
	return c, checkScalar(v, path)
}

// operators builds a field's operator object; several operators mean AND.
func operators(name string, o *object, path string) (Expr, error) {
	if len(o.keys) == 0 {
		return nil, invalid(path, "empty operator object")
	}
	return conjunction(o, path, func(key string, v any, path string) (Expr, error) {
		return operator(name, key, v, path)
	})
}

// operator builds one field operator, or a field-level $not.
func operator(name, key string, v any, path string) (Expr, error) {
	if !strings.HasPrefix(key, "$") {
		return nil, invalid(path, "object values are not comparable; use a dotted path or an operator")
	}
	if key == keyNot {
		o, ok := v.(*object)
		if !ok {
			return nil, invalid(path, "$not on a field takes an operator object")
		}
		x, err := operators(name, o, path)
		return Not{X: x}, err
	}
	if !fieldOps[Op(key)] {
		return nil, invalid(path, "unknown operator")
	}
	c := Cmp{Field: name, Op: Op(key), Value: v}
	return c, checkCmp(c, path, Limits{MaxInList: math.MaxInt}) // list length: validate
}
