package schema

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Sentinel errors.
var (
	// ErrInvalidSchema wraps every problem with a schema document or URI.
	ErrInvalidSchema = errors.New("schema: invalid")
	// ErrInvalidDocument wraps a validation failure of a document.
	ErrInvalidDocument = errors.New("schema: document does not validate")
	// ErrDuplicate is returned when a URI is registered again with other
	// content or by another capability.
	ErrDuplicate = errors.New("schema: duplicate schema URI")
)

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidSchema, fmt.Sprintf(format, args...))
}

// Schema is a parsed and compiled ASM schema.
type Schema struct {
	URI        string    // the schema's $id, its name everywhere
	Name       string    // the state name from the URI ("note", "ConversationLog")
	Version    string    // the URI fragment ("v1")
	Namespace  Namespace // where its documents live
	Capability string    // the declaring capability id ("" for core and built-ins)
	CompileID  string    // urn:agentnode:schema:<sha256>: the id it was compiled under

	Container   string            // object, map, list or log
	CRDT        string            // the container's CRDT (append_only is log_rga)
	Fields      map[string]string // top-level field -> CRDT name, including Collection
	Collection  string            // the field holding a map/list/log container's entries ("" = none)
	Required    []string          // top-level required fields
	TTL         *Duration         // x-ttl
	Retention   *Retention        // x-retention
	Compression string            // x-compression: "", br, zstd or gzip
	Visibility  string            // x-visibility, default private
	Indexes     []Index           // expression indexes the store creates
	Props       []string          // top-level property names, sorted

	Raw      json.RawMessage // the document as registered
	compiled *jsonschema.Schema
}

// Parse parses, checks and compiles an ASM schema. declaringCap is the id of
// the capability whose package holds the schema ("" for none): the ACP form
// did:nuwa:state:<name>#<ver> lives in that capability's namespace, and a
// capability may only declare schemas of its own cap namespace.
func Parse(raw []byte, declaringCap string) (*Schema, error) {
	doc, err := decodeObject(raw)
	if err != nil {
		return nil, err
	}
	s := &Schema{Raw: bytes.Clone(raw), Capability: declaringCap}
	steps := []func(map[string]any) error{s.identity, s.rootType, s.annotations, s.properties, s.compile}
	for _, step := range steps {
		if err := step(doc); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// MustParse is Parse for schemas known to be valid (built-ins, tests).
func MustParse(raw []byte, declaringCap string) *Schema {
	s, err := Parse(raw, declaringCap)
	if err != nil {
		panic(err)
	}
	return s
}

func decodeObject(raw []byte) (map[string]any, error) {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, invalidf("not JSON: %v", err)
	}
	doc, ok := v.(map[string]any)
	if !ok {
		return nil, invalidf("a schema must be a JSON object")
	}
	return doc, nil
}

// identity reads $id and resolves the namespace.
func (s *Schema) identity(doc map[string]any) error {
	id, _ := doc["$id"].(string)
	if id == "" {
		return invalidf("$id (the schema URI) is required")
	}
	info, err := ParseURI(id)
	if err != nil {
		return err
	}
	s.URI, s.Name, s.Version, s.Namespace = id, info.Name, info.Version, info.Namespace
	capName := CapName(s.Capability)
	switch {
	case info.Declared && s.Capability == "":
		return invalidf("%s: the did:nuwa:state form needs a declaring capability", id)
	case info.Declared:
		if !segmentRE.MatchString(capName) {
			return invalidf("capability id %q has no usable name", s.Capability)
		}
		s.Namespace.Name = capName
	case info.Namespace.Kind == KindCap && s.Capability != "" && capName != info.Namespace.Name:
		return invalidf("%s: capability %q may not declare state of capability %q", id, capName, info.Namespace.Name)
	}
	if !ValidPrefix(s.Namespace.Prefix()) {
		return invalidf("%s: namespace %s gives no valid table name", id, s.Namespace)
	}
	return nil
}

func (s *Schema) rootType(doc map[string]any) error {
	switch t := doc["type"].(type) {
	case nil:
		return nil
	case string:
		if t == "object" {
			return nil
		}
	}
	return invalidf("%s: the root of an ASM schema must be \"type\": \"object\"", s.URI)
}

func (s *Schema) annotations(doc map[string]any) error {
	x, err := readXASM(doc)
	if err != nil {
		return err
	}
	return x.apply(s)
}

// compile compiles the schema with jsonschema under a derived id: the
// spec's $id values (did:nuwa:state:note#v1) carry a fragment, which a
// 2020-12 $id may not. External references are refused.
func (s *Schema) compile(doc map[string]any) error {
	sum := sha256.Sum256(s.Raw)
	s.CompileID = "urn:agentnode:schema:" + hex.EncodeToString(sum[:])
	doc["$id"] = s.CompileID
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	c.UseLoader(noLoader{})
	if err := c.AddResource(s.CompileID, doc); err != nil {
		return invalidf("%s: %v", s.URI, err)
	}
	sch, err := c.Compile(s.CompileID)
	if err != nil {
		return invalidf("%s: %v", s.URI, err)
	}
	s.compiled = sch
	return nil
}

// noLoader refuses every external $ref: a schema from a capability package
// must not make the node read files or fetch URLs.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("external reference %q refused", url)
}
