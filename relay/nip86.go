package relay

import (
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"time"

	"github.com/nbd-wtf/go-nostr/nip86"

	"github.com/agentnode/agentnode/internal/nip98"
)

// nip86Type is the content type of NIP-86 calls.
const nip86Type = "application/nostr+json+rpc"

// maxNIP86Body bounds a NIP-86 request body (413 beyond).
const maxNIP86Body = 64 << 10

// isNIP86 reports whether req is a NIP-86 call (by its content type).
func isNIP86(req *http.Request) bool {
	mt, _, err := mime.ParseMediaType(req.Header.Get("Content-Type"))
	return err == nil && mt == nip86Type && req.Header.Get("Upgrade") == ""
}

// serveNIP86 answers a NIP-86 relay management call: POST, NIP-98 signed
// by one of Config.Operators (else 401), a JSON {"method", "params"} body
// (else 400); the answer is {"result"} or {"error"} with 200.
func (r *Relay) serveNIP86(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeNIP86(w, http.StatusMethodNotAllowed, nip86.Response{Error: "invalid: NIP-86 calls are POST"})
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, maxNIP86Body))
	if err != nil {
		writeNIP86(w, http.StatusRequestEntityTooLarge, nip86.Response{Error: "invalid: request body over 64 KiB"})
		return
	}
	operator, status, msg := r.authorizeNIP86(req, body)
	if status != 0 {
		writeNIP86(w, status, nip86.Response{Error: msg})
		return
	}
	var call nip86.Request
	if err := json.Unmarshal(body, &call); err != nil || call.Method == "" {
		writeNIP86(w, http.StatusBadRequest, nip86.Response{Error: `invalid: the body is not a NIP-86 request {"method": ..., "params": [...]}`})
		return
	}
	resp := r.callNIP86(req.Context(), call)
	r.log.Info("relay management call", "method", call.Method, "operator", operator, "ok", resp.Error == "", "error", resp.Error)
	writeNIP86(w, http.StatusOK, resp)
}

// authorizeNIP86 checks the call's NIP-98 auth: the signer must be an
// operator (looked at before any signature is checked), the event valid
// for this URL, method and body, and not used before. It returns the
// operator, or the HTTP status and reason of the refusal.
func (r *Relay) authorizeNIP86(req *http.Request, body []byte) (string, int, string) {
	signer, err := nip98.Signer(req.Header.Get("Authorization"))
	if err != nil {
		return "", http.StatusUnauthorized, "unauthorized: " + err.Error()
	}
	if !r.manage.isOperator(signer) {
		return "", http.StatusUnauthorized, "unauthorized: this pubkey is not an operator of this relay"
	}
	now := time.Now()
	pubkey, id, err := nip98.Verify(req, "http://"+req.Host+req.URL.Path, body, now)
	if err != nil {
		return "", http.StatusUnauthorized, "unauthorized: " + err.Error()
	}
	switch err := r.manage.seen.Use(id, now); {
	case errors.Is(err, nip98.ErrBusy):
		return "", http.StatusTooManyRequests, "rate-limited: too many management calls in the last two minutes"
	case err != nil:
		return "", http.StatusUnauthorized, "unauthorized: this auth event was used already (sign one per call)"
	}
	return pubkey, 0, ""
}

func writeNIP86(w http.ResponseWriter, status int, resp nip86.Response) {
	w.Header().Set("Content-Type", nip86Type)
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", "Nostr")
	}
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(resp)
}
