package httpauth_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/agentnode/agentnode/internal/httpauth"
)

func TestCheck(t *testing.T) {
	const tok = "0123456789abcdef"
	for _, tc := range []struct {
		name, want, header string
		err                error
	}{
		{"match", tok, "Bearer " + tok, nil},
		{"scheme lower case", tok, "bearer " + tok, nil},
		{"scheme upper case", tok, "BEARER " + tok, nil},
		{"extra spaces", tok, "  Bearer   " + tok + "  ", nil},
		{"wrong token", tok, "Bearer nope", httpauth.ErrUnauthorized},
		{"token prefix", tok, "Bearer " + tok[:8], httpauth.ErrUnauthorized},
		{"token longer", tok, "Bearer " + tok + "x", httpauth.ErrUnauthorized},
		{"no header", tok, "", httpauth.ErrUnauthorized},
		{"empty bearer", tok, "Bearer ", httpauth.ErrUnauthorized},
		{"other scheme", tok, "Basic " + tok, httpauth.ErrUnauthorized},
		{"no scheme", tok, tok, httpauth.ErrUnauthorized},
		{"none configured, none sent", "", "", httpauth.ErrNoToken},
		{"none configured, empty bearer", "", "Bearer ", httpauth.ErrNoToken},
		{"none configured, some sent", "", "Bearer x", httpauth.ErrNoToken},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/", nil)
			if tc.header != "" {
				r.Header.Set("Authorization", tc.header)
			}
			w := httptest.NewRecorder()
			err := httpauth.Check(w, r, tc.want)
			if !errors.Is(err, tc.err) || (tc.err == nil) != (err == nil) {
				t.Fatalf("Check = %v, want %v", err, tc.err)
			}
			gotChallenge := w.Header().Get("WWW-Authenticate")
			if wantChallenge := map[bool]string{true: "", false: httpauth.Challenge}[err == nil]; gotChallenge != wantChallenge {
				t.Errorf("WWW-Authenticate = %q, want %q", gotChallenge, wantChallenge)
			}
		})
	}
}
