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

func TestRequire(t *testing.T) {
	h := httpauth.Require("s3cret", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	}))
	for header, want := range map[string]int{"Bearer s3cret": http.StatusNoContent, "bearer s3cret": http.StatusNoContent,
		"Bearer s3cre": http.StatusUnauthorized, "": http.StatusUnauthorized} {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Header.Set("Authorization", header)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != want {
			t.Errorf("%q: status %d, want %d", header, w.Code, want)
		}
		if want == http.StatusUnauthorized && w.Header().Get("WWW-Authenticate") != httpauth.Challenge {
			t.Errorf("%q: no challenge on 401", header)
		}
	}
	open := httpauth.Require("", http.NotFoundHandler())
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	w := httptest.NewRecorder()
	open.ServeHTTP(w, r)
	if w.Code != http.StatusUnauthorized {
		t.Errorf("empty configured token: status %d, want 401", w.Code)
	}
}
