package state

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/agentnode/agentnode/agentd/state/schema"
)

// Patch ops: RFC 6902 plus two extensions, $inc (add a number; counter
// fields and plain numbers) and $push (append to an array; logs and sets).
const (
	opAdd     = "add"
	opRemove  = "remove"
	opReplace = "replace"
	opMove    = "move"
	opCopy    = "copy"
	opTest    = "test"
	opInc     = "$inc"
	opPush    = "$push"
)

// maxPatchOps bounds one patch.
const maxPatchOps = 1000

// patchOp is one operation of a Patch.
type patchOp struct {
	Op    string          `json:"op"`
	Path  string          `json:"path"`
	From  string          `json:"from,omitempty"`
	Value json.RawMessage `json:"value,omitempty"`
	path  []string
	from  []string
	value any
}

// Patch is a parsed state.update patch.
type Patch struct{ ops []patchOp }

// ParsePatch reads a patch in either form:
//
//	[{"op":"replace","path":"/title","value":"x"}, {"op":"$inc","path":"/views","value":1}, ...]
//	{"$set": {"title": "x"}, "$inc": {"views": 1}, "$push": {"tags": "new"}}
//
// In the object form keys are JSON pointers ("/a/b") or dotted paths
// ("a.b"); $set is replace-or-add. A $push value {"$each": [...]} appends
// several values.
func ParsePatch(raw []byte) (*Patch, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, newError(CodeInvalidInput, "empty patch")
	}
	var ops []patchOp
	var err error
	if raw[0] == '{' {
		ops, err = objectForm(raw)
	} else if err = json.Unmarshal(raw, &ops); err != nil {
		err = newError(CodeInvalidInput, "patch: want a JSON Patch array or a {$set,$inc,$push} object")
	}
	if err != nil {
		return nil, err
	}
	if len(ops) == 0 || len(ops) > maxPatchOps {
		return nil, newError(CodeInvalidInput, "patch: want 1 to %d ops", maxPatchOps)
	}
	for i := range ops {
		if err := ops[i].prepare(); err != nil {
			return nil, newError(CodeInvalidInput, "patch op %d: %s", i, err)
		}
	}
	return &Patch{ops: ops}, nil
}

// objectForm converts {"$set":{...},"$inc":{...},"$push":{...}}.
func objectForm(raw []byte) ([]patchOp, error) {
	var m map[string]map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, newError(CodeInvalidInput, "patch: object form wants {\"$set\"|\"$inc\"|\"$push\": {path: value}}")
	}
	kinds := map[string]string{"$set": "$set", "$inc": opInc, "$push": opPush}
	var ops []patchOp
	for _, k := range sortedKeys(m) {
		op, ok := kinds[k]
		if !ok {
			return nil, newError(CodeInvalidInput, "patch: unknown operator %q", k)
		}
		for _, p := range sortedKeys(m[k]) {
			ops = append(ops, patchOp{Op: op, Path: toPointer(p), Value: m[k][p]})
		}
	}
	return ops, nil
}

// toPointer turns a dotted path into a JSON pointer; pointers pass through.
func toPointer(p string) string {
	if p == "" || strings.HasPrefix(p, "/") {
		return p
	}
	parts := strings.Split(p, ".")
	for i, s := range parts {
		parts[i] = strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
	}
	return "/" + strings.Join(parts, "/")
}

// prepare parses pointers and the value.
func (o *patchOp) prepare() error {
	var err error
	if o.path, err = parsePointer(o.Path); err != nil {
		return fmt.Errorf("path: %w", err)
	}
	switch o.Op {
	case opMove, opCopy:
		if o.from, err = parsePointer(o.From); err != nil {
			return fmt.Errorf("from: %w", err)
		}
		return nil
	case opRemove:
		return nil
	case opAdd, opReplace, opTest, opInc, opPush, "$set":
	default:
		return fmt.Errorf("unknown op %q", o.Op)
	}
	if len(o.Value) == 0 {
		return fmt.Errorf("%s needs a value", o.Op)
	}
	o.value, err = decodeValue(o.Value)
	return err
}

// parsePointer parses an RFC 6901 JSON pointer ("" is the whole document).
func parsePointer(s string) ([]string, error) {
	if s == "" {
		return nil, nil
	}
	if s[0] != '/' {
		return nil, fmt.Errorf("%q is not a JSON pointer", s)
	}
	parts := strings.Split(s[1:], "/")
	for i, p := range parts {
		if strings.Contains(strings.NewReplacer("~0", "", "~1", "").Replace(p), "~") {
			return nil, fmt.Errorf("bad escape in %q", s)
		}
		parts[i] = strings.ReplaceAll(strings.ReplaceAll(p, "~1", "/"), "~0", "~")
	}
	return parts, nil
}

func decodeValue(raw []byte) (any, error) {
	if v, ok := schema.DecodeValid(raw); ok {
		return v, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("value: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("value: trailing data")
	}
	return v, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
