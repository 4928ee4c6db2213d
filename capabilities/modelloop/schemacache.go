package modelloop

import (
	"crypto/sha256"
	"encoding/json"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// maxCachedSchemas bounds the compiled parameter schemas kept between
// Runs. Compiling is most of a tool step's cost (docs/MODEL.md); an
// installed capability's tools are the same turn after turn.
const maxCachedSchemas = 512

// schemaCache maps the sha256 of a parameters document to its compiled
// schema (or compile error). A compiled *jsonschema.Schema is read-only,
// so one is shared by concurrent Runs. When full, an arbitrary entry goes.
var schemaCache = struct {
	sync.Mutex
	m map[[32]byte]compiledSchema
}{m: map[[32]byte]compiledSchema{}}

type compiledSchema struct {
	schema *jsonschema.Schema
	err    error
}

// cachedSchema compiles params once per process (bounded), see compileSchema.
func cachedSchema(params json.RawMessage) (*jsonschema.Schema, error) {
	key := sha256.Sum256(params)
	schemaCache.Lock()
	c, ok := schemaCache.m[key]
	schemaCache.Unlock()
	if ok {
		return c.schema, c.err
	}
	s, err := compileSchema(params)
	schemaCache.Lock()
	defer schemaCache.Unlock()
	if len(schemaCache.m) >= maxCachedSchemas {
		for k := range schemaCache.m {
			delete(schemaCache.m, k)
			break
		}
	}
	schemaCache.m[key] = compiledSchema{s, err}
	return s, err
}
