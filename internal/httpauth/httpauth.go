package httpauth

import (
	"crypto/subtle"
	"errors"
	"net/http"
	"strings"
)

// Challenge is the WWW-Authenticate value of every refusal.
const Challenge = `Bearer realm="agentnode"`

// Errors of Equal and Check. Their text may be shown to the caller.
var (
	// ErrNoToken: the endpoint has no token configured, so nobody gets in.
	ErrNoToken = errors.New("no API token is configured: every request is refused")
	// ErrUnauthorized: the request's bearer token is missing or wrong.
	ErrUnauthorized = errors.New("missing or wrong API token (Authorization: Bearer <token>)")
)

// Token returns the token of r's "Authorization: Bearer <token>" header
// (scheme case-insensitive, surrounding spaces trimmed), or "" without one.
func Token(r *http.Request) string {
	scheme, tok, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(tok)
}

// Equal compares a presented token got with the configured want in
// constant time: nil when they match, ErrNoToken when want is empty,
// else ErrUnauthorized.
func Equal(want, got string) error {
	if want == "" {
		return ErrNoToken
	}
	if got == "" || subtle.ConstantTimeCompare([]byte(want), []byte(got)) != 1 {
		return ErrUnauthorized
	}
	return nil
}

// Check verifies r's bearer token against want. On refusal it sets the
// WWW-Authenticate challenge on w and returns the reason; the caller
// answers 401 in its own format.
func Check(w http.ResponseWriter, r *http.Request, want string) error {
	err := Equal(want, Token(r))
	if err != nil {
		w.Header().Set("WWW-Authenticate", Challenge)
	}
	return err
}

// Refuse answers 401 with err's text and the challenge.
func Refuse(w http.ResponseWriter, err error) {
	w.Header().Set("WWW-Authenticate", Challenge)
	http.Error(w, "unauthorized: "+err.Error(), http.StatusUnauthorized)
}
