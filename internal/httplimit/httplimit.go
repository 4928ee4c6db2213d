package httplimit

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
)

// Body serves next with r.Body bounded to max bytes (max <= 0: no bound).
// A request declaring a larger Content-Length is answered 413 at once.
func Body(max int64, next http.Handler) http.Handler {
	if max <= 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > max {
			TooLargeAnswer(w, max)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, max)
		next.ServeHTTP(w, r)
	})
}

// Buffer reads r's whole body (at most max bytes) before next runs, and
// answers 413 when it is larger; next reads the buffered bytes.
func Buffer(max int64, next http.Handler) http.Handler {
	if max <= 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > max {
			TooLargeAnswer(w, max)
			return
		}
		b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, max))
		switch {
		case TooLarge(err):
			TooLargeAnswer(w, max)
			return
		case err != nil:
			http.Error(w, "read body: "+err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(b))
		next.ServeHTTP(w, r)
	})
}

// TooLarge reports whether err comes from reading past a body's bound.
func TooLarge(err error) bool {
	var tooBig *http.MaxBytesError
	return errors.As(err, &tooBig)
}

// TooLargeAnswer answers 413 in plain text, naming the bound.
func TooLargeAnswer(w http.ResponseWriter, max int64) {
	w.Header().Set("Connection", "close")
	http.Error(w, fmt.Sprintf("request body too large: at most %d bytes", max), http.StatusRequestEntityTooLarge)
}
