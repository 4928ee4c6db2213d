package consent

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"

	"github.com/agentnode/agentnode/internal/httpauth"
	"github.com/agentnode/agentnode/internal/httplimit"
)

// routes is the API's mux, behind OwnerHandler's check.
func (h *handler) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/consent", h.list)
	mux.HandleFunc("POST /api/consent/approvals/{id}/approve", h.approve)
	mux.HandleFunc("POST /api/consent/approvals/{id}/deny", h.deny)
	mux.HandleFunc("POST /api/consent/revoked", h.revoke)
	mux.HandleFunc("DELETE /api/consent/revoked/{agent}", h.unrevoke)
	return mux
}

type handler struct {
	c   *Consent
	log *slog.Logger
}

// Overview is GET /api/consent's answer.
type Overview struct {
	Policy    Policy       `json:"policy"`
	Approvals []Approval   `json:"approvals"`
	Revoked   []Revocation `json:"revoked"`
}

func (h *handler) list(w http.ResponseWriter, r *http.Request) {
	st := Status(r.URL.Query().Get("status"))
	if st != "" && st != StatusPending && st != StatusApproved && st != StatusDenied {
		writeError(w, h.log, r, http.StatusBadRequest, "bad_request", errors.New("status must be pending, approved or denied"))
		return
	}
	list, err := h.c.List(r.Context(), st)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	rev, err := h.c.RevokedList(r.Context())
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, Overview{Policy: h.c.Policy(), Approvals: mineOnly(r, list, func(a Approval) string { return a.Agent }),
		Revoked: mineOnly(r, rev, func(v Revocation) string { return v.Agent })})
}

func (h *handler) approve(w http.ResponseWriter, r *http.Request) {
	if !h.mayDecide(w, r) {
		return
	}
	a, err := h.c.Approve(r.Context(), r.PathValue("id"))
	h.reply(w, r, a, err)
}

func (h *handler) deny(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Reason string `json:"reason"`
	}
	if !h.decode(w, r, &in) || !h.mayDecide(w, r) {
		return
	}
	a, err := h.c.Deny(r.Context(), r.PathValue("id"), in.Reason)
	h.reply(w, r, a, err)
}

func (h *handler) revoke(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Agent  string `json:"agent"`
		Reason string `json:"reason"`
	}
	if !h.decode(w, r, &in) || !h.mayAct(w, r, in.Agent) {
		return
	}
	rev, err := h.c.Revoke(r.Context(), in.Agent, in.Reason)
	h.reply(w, r, rev, err)
}

func (h *handler) unrevoke(w http.ResponseWriter, r *http.Request) {
	id, err := AgentID(r.PathValue("agent"))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if !h.mayAct(w, r, id) {
		return
	}
	was, err := h.c.Unrevoke(r.Context(), id)
	h.reply(w, r, map[string]any{"agent": id, "revoked": was}, err)
}

// mayDecide: the approval {id} is the caller's to decide (else it
// answers 403 or the lookup's error and returns false).
func (h *handler) mayDecide(w http.ResponseWriter, r *http.Request) bool {
	if isOperator(r) { // no lookup
		return true
	}
	a, err := h.c.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		h.fail(w, r, err)
		return false
	}
	return h.mayAct(w, r, a.Agent)
}

// mayAct: agent (npub or hex) is the caller's.
func (h *handler) mayAct(w http.ResponseWriter, r *http.Request, agent string) bool {
	id, err := AgentID(agent)
	if err != nil {
		h.fail(w, r, err)
		return false
	}
	if !mine(r, id) {
		h.fail(w, r, ErrNotYours)
		return false
	}
	return true
}

// mineOnly keeps the entries whose agent is the caller's.
func mineOnly[T any](r *http.Request, list []T, agent func(T) string) []T {
	if isOperator(r) {
		return list
	}
	out := []T{}
	for _, v := range list {
		if mine(r, agent(v)) {
			out = append(out, v)
		}
	}
	return out
}

// maxBody bounds the API's request bodies.
const maxBody = 64 << 10

// decode reads a JSON body into v (unknown fields refused); on failure it
// answers 400 (413 over maxBody) and returns false.
func (h *handler) decode(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if httplimit.TooLarge(err) {
		writeError(w, h.log, r, http.StatusRequestEntityTooLarge, "too_large", fmt.Errorf("body: at most %d bytes", maxBody))
		return false
	}
	if err != nil && !errors.Is(err, io.EOF) {
		writeError(w, h.log, r, http.StatusBadRequest, "bad_request", errors.New("body: "+err.Error()))
		return false
	}
	return true
}

func (h *handler) reply(w http.ResponseWriter, r *http.Request, v any, err error) {
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// fail answers err with its code; unknown errors are logged, not shown.
func (h *handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case errors.Is(err, ErrNotFound):
		writeError(w, h.log, r, http.StatusNotFound, "not_found", err)
	case errors.Is(err, ErrDecided):
		writeError(w, h.log, r, http.StatusConflict, "decided", err)
	case errors.Is(err, ErrBadAgent):
		writeError(w, h.log, r, http.StatusBadRequest, "bad_request", err)
	case errors.Is(err, ErrNotYours):
		writeError(w, h.log, r, http.StatusForbidden, "forbidden", err)
	default:
		writeError(w, h.log, r, http.StatusInternalServerError, "internal", err)
	}
}

func requireToken(token string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := httpauth.Check(w, r, token); err != nil {
			writeError(w, nil, r, http.StatusUnauthorized, "unauthorized", errors.New("consent API: missing or wrong API token"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// APIError is an error answered by OwnerHandler.
type APIError struct {
	Status  int    `json:"-"`
	Code    string `json:"code"`
	Message string `json:"error"`
}

func (e *APIError) Error() string { return e.Message }

// Is matches the sentinels of the codes that have one.
func (e *APIError) Is(target error) bool {
	switch e.Code {
	case "not_found":
		return target == ErrNotFound
	case "decided":
		return target == ErrDecided
	case "bad_request":
		return target == ErrBadAgent
	}
	return false
}

func writeError(w http.ResponseWriter, log *slog.Logger, r *http.Request, status int, code string, err error) {
	msg := err.Error()
	if code == "internal" {
		log.Error("consent API", "method", r.Method, "path", r.URL.Path, "err", err)
		msg = "internal error"
	}
	writeJSON(w, status, APIError{Code: code, Message: msg})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}
