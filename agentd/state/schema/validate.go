package schema

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// maxReported bounds the validation failures quoted in an error.
const maxReported = 3

// Validate checks a decoded document (as from DecodeJSON: numbers as
// json.Number) against the schema. The error wraps ErrInvalidDocument and
// names the failing locations.
func (s *Schema) Validate(v any) error {
	err := s.compiled.Validate(v)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return fmt.Errorf("%w: %v", ErrInvalidDocument, err)
	}
	return fmt.Errorf("%w: %s", ErrInvalidDocument, describe(ve))
}

// ValidateJSON decodes raw and validates it.
func (s *Schema) ValidateJSON(raw []byte) error {
	v, err := DecodeJSON(raw)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidDocument, err)
	}
	return s.Validate(v)
}

// DecodeJSON decodes one JSON value with numbers kept as json.Number, the
// form Validate expects.
func DecodeJSON(raw []byte) (any, error) {
	if v, ok := DecodeValid(raw); ok {
		return v, nil
	}
	return jsonschema.UnmarshalJSON(bytes.NewReader(raw)) // for its error
}

// describe renders the leaf failures as "at /path: message".
func describe(ve *jsonschema.ValidationError) string {
	var parts []string
	for _, u := range ve.BasicOutput().Errors {
		if u.Error == nil || len(parts) == maxReported {
			continue
		}
		loc := u.InstanceLocation
		if loc == "" {
			loc = "/"
		}
		parts = append(parts, "at "+loc+": "+u.Error.String())
	}
	if len(parts) == 0 {
		return strings.TrimSpace(ve.Error())
	}
	return strings.Join(parts, "; ")
}
