package llm

import (
	"errors"
	"fmt"
)

// Errors.
var (
	// ErrNoModel: no model is configured (AGENTNODE_LLM_MODEL unset).
	ErrNoModel = errors.New("llm: no model configured (set AGENTNODE_LLM_MODEL)")
	// ErrNoBaseURL: Config.BaseURL is empty.
	ErrNoBaseURL = errors.New("llm: no base URL configured")
	// ErrBadBaseURL: Config.BaseURL is not an http(s) URL.
	ErrBadBaseURL = errors.New("llm: bad base URL")
	// ErrNoChoices: the provider answered 200 without any choice.
	ErrNoChoices = errors.New("llm: response has no choices")
)

// HTTPError is a non-2xx answer from the provider. Message is the
// provider's own error message when it sent one, else a body excerpt.
type HTTPError struct {
	Status   int
	Message  string
	Attempts int // how many requests were made, retries included
}

func (e *HTTPError) Error() string {
	msg := fmt.Sprintf("llm: provider answered HTTP %d", e.Status)
	if e.Message != "" {
		msg += ": " + e.Message
	}
	if e.Attempts > 1 {
		msg += fmt.Sprintf(" (after %d attempts)", e.Attempts)
	}
	return msg
}

// Retryable reports whether the status is worth retrying (429, 5xx).
func (e *HTTPError) Retryable() bool {
	return e.Status == 429 || e.Status >= 500
}
