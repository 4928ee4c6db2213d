package acp

import "encoding/json"

// Options are the checks a caller adds to Parse.
type Options struct {
	// CheckSchema, when set, is called with the package schema's URI ($id)
	// and its JSON once the schema compiles; an error becomes a problem of
	// the schema field. The daemon wires agentd/state/schema's x-asm
	// validation here (capabilities must not import agentd).
	CheckSchema func(schemaURI string, schema json.RawMessage) error
}
