package cap

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// schemaCache compiles each distinct schema document once. The key is the
// sha256 of the schema bytes, so a manifest whose schema changes under the
// same (id, version) is compiled again rather than validated stale.
type schemaCache struct {
	mu       sync.Mutex
	compiled map[string]*jsonschema.Schema
}

func newSchemaCache() *schemaCache {
	return &schemaCache{compiled: map[string]*jsonschema.Schema{}}
}

// get returns the compiled schema for raw.
func (c *schemaCache) get(raw []byte) (*jsonschema.Schema, error) {
	sum := sha256.Sum256(raw)
	key := hex.EncodeToString(sum[:])
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.compiled[key]; ok {
		return s, nil
	}
	s, err := compileSchema(key, raw)
	if err != nil {
		return nil, err
	}
	c.compiled[key] = s
	return s, nil
}

// compileSchema compiles raw as a 2020-12 schema under a derived id
// (schemas may carry $id values that are not valid 2020-12 ids).
func compileSchema(key string, raw []byte) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	if m, ok := doc.(map[string]any); ok {
		delete(m, "$id")
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	url := "mem://cap/" + key + ".json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	return s, nil
}

// validate checks the JSON document raw against s and returns a message
// fit for a peer (no schema URLs).
func validate(s *jsonschema.Schema, raw []byte) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	err = s.Validate(v)
	var ve *jsonschema.ValidationError
	if errors.As(err, &ve) {
		return errors.New(validationMessage(ve))
	}
	return err
}

// validationMessage flattens a validation error to "at '/x': reason; ...".
func validationMessage(ve *jsonschema.ValidationError) string {
	lines := strings.Split(ve.Error(), "\n")
	var parts []string
	for _, l := range lines[1:] { // line 0 names the schema URL
		if l = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "- ")); l != "" {
			parts = append(parts, l)
		}
	}
	if len(parts) == 0 {
		return "input does not match the schema"
	}
	return strings.Join(parts, "; ")
}
