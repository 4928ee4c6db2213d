package router

import (
	"errors"
	"fmt"

	"github.com/agentnode/agentnode/capabilities/acp"
)

// Errors.
var (
	// ErrEmptyKeyword: a keyword trigger with an empty value.
	ErrEmptyKeyword = errors.New("router: empty keyword")
	// ErrUnknownTrigger: a trigger type other than regex, keyword, embedding.
	ErrUnknownTrigger = errors.New("router: unknown trigger type")
)

// TriggerError says which trigger of which capability was dropped.
type TriggerError struct {
	Capability string
	Trigger    acp.Trigger
	Err        error
}

func (e *TriggerError) Error() string {
	return fmt.Sprintf("router: %s: %s trigger %q dropped: %v", e.Capability, e.Trigger.Type, e.Trigger.Value, e.Err)
}

func (e *TriggerError) Unwrap() error { return e.Err }
