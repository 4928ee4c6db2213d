package agentrpc

import (
	"bytes"
	"encoding/json"

	"github.com/agentnode/agentnode/events"
	"github.com/agentnode/agentnode/jsonrpc"
)

// Meta is the _meta member of ACP params and results.
type Meta struct {
	CorrelationID string `json:"correlationId,omitempty"`
	// ApprovalID names the owner's approval a retried privileged call
	// relies on (see -32004).
	ApprovalID string `json:"approvalId,omitempty"`
}

// decode unmarshals params into v: absent params, or params of the wrong
// JSON shape, are -32602 invalid params.
func decode(params json.RawMessage, v any) error {
	if len(bytes.TrimSpace(params)) == 0 || bytes.Equal(bytes.TrimSpace(params), []byte("null")) {
		return jsonrpc.InvalidParams("an object is required")
	}
	if err := json.Unmarshal(params, v); err != nil {
		return jsonrpc.InvalidParams("%s", shortJSONError(err))
	}
	return nil
}

func shortJSONError(err error) string {
	var te *json.UnmarshalTypeError
	if ok := asType(err, &te); ok {
		if te.Field != "" {
			return te.Field + ": want " + kind(te.Type.Kind().String())
		}
		return "params must be an object"
	}
	return "not the expected JSON"
}

func asType(err error, te **json.UnmarshalTypeError) bool {
	t, ok := err.(*json.UnmarshalTypeError)
	if ok {
		*te = t
	}
	return ok
}

// agentID normalises a required agent id (hex or npub) named field.
func agentID(field, s string) (string, error) {
	if s == "" {
		return "", invalidPayload("%s is required", field)
	}
	id, err := events.ParsePubKey(s)
	if err != nil {
		return "", invalidPayload("%s is not an agent id (64 hex or npub)", field)
	}
	return id, nil
}

// optionalAgentID is agentID for a field that may be empty.
func optionalAgentID(field, s string) (string, error) {
	if s == "" {
		return "", nil
	}
	return agentID(field, s)
}

// kind names a Go kind as a JSON type.
func kind(k string) string {
	switch k {
	case "struct", "map":
		return "object"
	case "slice", "array":
		return "array"
	case "int", "int64", "float64", "uint", "int32":
		return "number"
	case "bool":
		return "boolean"
	}
	return k
}
