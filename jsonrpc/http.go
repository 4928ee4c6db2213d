package jsonrpc

import (
	"errors"
	"io"
	"mime"
	"net/http"
)

// ServeHTTP serves POST application/json (one request or a batch per body)
// and WebSocket upgrades (see serveWS). A response is 200 with the JSON
// body, or 204 when the body held only notifications.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if isWebSocket(r) {
		s.serveWS(w, r)
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		http.Error(w, "jsonrpc: POST application/json or a WebSocket upgrade", http.StatusMethodNotAllowed)
		return
	}
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
		http.Error(w, "jsonrpc: Content-Type must be application/json", http.StatusUnsupportedMediaType)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.opts.MaxRequestBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeJSON(w, http.StatusRequestEntityTooLarge, mustMarshal(errorResponse(nil, errTooLarge)))
			return
		}
		http.Error(w, "jsonrpc: read body", http.StatusBadRequest)
		return
	}
	out := s.Handle(r.Context(), body)
	if out == nil {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// errTooLarge answers a body or frame over MaxRequestBytes.
var errTooLarge = &Error{Code: CodeInvalidRequest, Message: "invalid request: too large"}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
