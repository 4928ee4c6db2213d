package store

import (
	"encoding/json"
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/agentnode/agentnode/agentd/state/crdt"
	"github.com/agentnode/agentnode/agentd/state/schema"
)

// Materialise renders a document's CRDT as JSON: every present field's
// value, with an mv_register showing its winner (the greatest (ts, id)
// among the surviving values), and declared fields that no op has set yet
// shown empty so that patches can address them: [] for grow_only_set,
// log_rga and rga_list, {} for or_map, and for required fields "" (rga_text),
// 0 (counter) and false (flag). It returns the decoded value (numbers as
// json.Number) and its encoding.
func Materialise(sch *schema.Schema, root *crdt.ORMap) (map[string]any, []byte, error) {
	out := mapValue(root)
	addDefaults(sch, out)
	raw, err := marshalDocument(out)
	if err != nil {
		return nil, nil, fmt.Errorf("store: encode document: %w", err)
	}
	v, err := decoded(out)
	if err != nil {
		return nil, nil, fmt.Errorf("store: decode document: %w", err)
	}
	return v.(map[string]any), raw, nil
}

// decoded returns v as schema.DecodeJSON(json.Marshal(v)) would, without
// the round trip: maps and slices are new, valid UTF-8 strings are shared
// (decoding would copy them: a large text was held once more), raw JSON is
// decoded once, anything else (numbers, invalid UTF-8) goes through the
// round trip.
func decoded(v any) (any, error) {
	switch x := v.(type) {
	case nil, bool, json.Number:
		return x, nil
	case string:
		if utf8.ValidString(x) {
			return x, nil
		}
	case json.RawMessage:
		if json.Valid(x) {
			return schema.DecodeJSON(x) // as the round trip: Marshal only compacts and escapes
		}
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if !utf8.ValidString(k) {
				return roundTrip(v)
			}
			d, err := decoded(e)
			if err != nil {
				return nil, err
			}
			out[k] = d
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			d, err := decoded(e)
			if err != nil {
				return nil, err
			}
			out[i] = d
		}
		return out, nil
	}
	return roundTrip(v)
}

func roundTrip(v any) (any, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return schema.DecodeJSON(raw)
}

// mapValue renders an or_map, descending into nested maps.
func mapValue(m *crdt.ORMap) map[string]any {
	out := make(map[string]any)
	for _, k := range m.Keys() {
		c, _ := m.Get(k)
		out[k] = crdtValue(c)
	}
	return out
}

// crdtValue renders one CRDT.
func crdtValue(c crdt.CRDT) any {
	switch v := c.(type) {
	case *crdt.ORMap:
		return mapValue(v)
	case *crdt.MVRegister:
		vals, _ := v.Value().([]json.RawMessage)
		if len(vals) == 0 {
			return nil
		}
		return vals[len(vals)-1]
	}
	return c.Value()
}

// addDefaults fills declared fields that have no value yet.
func addDefaults(sch *schema.Schema, out map[string]any) {
	for field, typ := range sch.Fields {
		if _, ok := out[field]; ok {
			continue
		}
		if v, ok := emptyValue(typ, slices.Contains(sch.Required, field)); ok {
			out[field] = v
		}
	}
}

func emptyValue(typ string, required bool) (any, bool) {
	switch typ {
	case crdt.TypeGrowOnlySet, crdt.TypeLogRGA, crdt.TypeRGAList:
		return []any{}, true
	case crdt.TypeORMap:
		return map[string]any{}, true
	}
	if !required {
		return nil, false
	}
	switch typ {
	case crdt.TypeRGAText:
		return "", true
	case crdt.TypeCounter:
		return 0, true
	case crdt.TypeFlag:
		return false, true
	}
	return nil, false
}
