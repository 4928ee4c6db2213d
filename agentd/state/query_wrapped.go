package state

import (
	"bytes"
	"encoding/json"
)

// unwrapQuery returns the ASM-QL AST of state.query's arguments. NIP-8's
// tool table names the parameter "query": {"query": {…AST…}} is the spec's
// form, the bare AST (agentnode's own form) is taken as well. Only an object
// whose one key is "query" and whose value is an object is unwrapped;
// anything else is returned unchanged for the parser to judge (an AST has no
// "query" key, so the two forms cannot be confused).
func unwrapQuery(args []byte) []byte {
	dec := json.NewDecoder(bytes.NewReader(args))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return args
	}
	if t, err := dec.Token(); err != nil || t != "query" {
		return args
	}
	var inner json.RawMessage
	if err := dec.Decode(&inner); err != nil || !bytes.HasPrefix(bytes.TrimSpace(inner), []byte("{")) {
		return args
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') {
		return args
	}
	if _, err := dec.Token(); err == nil || dec.More() {
		return args // trailing data: let the parser refuse it
	}
	return inner
}
