package consent

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/agentnode/agentnode/internal/nip98"
)

// OwnerHandler is the owner's HTTP API over c, JSON in and out. Every
// request needs "Authorization: Bearer <token>" (the node's API token) or
// an agent owner's NIP-98 (below): pending approvals describe private
// operations. Mount it for "/api/consent" and
// "/api/consent/".
//
//	GET    /api/consent[?status=pending]        {"policy", "approvals": [Approval], "revoked": [Revocation]}
//	POST   /api/consent/approvals/{id}/approve  Approval
//	POST   /api/consent/approvals/{id}/deny     {"reason"} -> Approval
//	POST   /api/consent/revoked                 {"agent", "reason"} -> Revocation
//	DELETE /api/consent/revoked/{agent}         {"agent", "revoked": was it}
//
// Errors are {"error": message, "code": code}; codes: unauthorized,
// forbidden (an owner's request about another's agent),
// bad_request, too_large (413), not_found, decided, internal.
//
// Besides the node's API token (the operator: every agent), it takes a NIP-98
// "Authorization: Nostr <base64 event>" signed by a key that owns agents
// on this node (owned nil: the token only) — owned returns the hex keys
// of the agents owner owns (nil or empty: none, and the request is refused
// 403). Such an owner sees
// only their agents' approvals and revocations, and approves, denies,
// revokes and unrevokes only those (403 "forbidden" otherwise). Each
// request needs its own NIP-98 event (60 s, used once: nip98.Guard).
func OwnerHandler(c *Consent, token string, owned func(owner string) []string, log *slog.Logger) http.Handler {
	if log == nil {
		log = slog.Default()
	}
	h := &handler{c: c, log: log}
	return authorize(token, owned, nip98.NewGuard(nil), h.routes())
}

// ErrNotYours: an owner asked about an agent they do not own.
var ErrNotYours = errors.New("consent: that agent is not one of yours")

// scopeKey is the context key of an owner's agents; absent for the
// operator.
type scopeKey struct{}

// mine reports whether r may see or decide for agent: the operator for
// every agent, an owner for theirs.
func mine(r *http.Request, agent string) bool {
	keys, owner := r.Context().Value(scopeKey{}).(map[string]bool)
	return !owner || keys[agent]
}

// isOperator reports whether r came with the API token.
func isOperator(r *http.Request) bool {
	_, owner := r.Context().Value(scopeKey{}).(map[string]bool)
	return !owner
}

// authorize lets the operator's token through, or an owner's NIP-98 with
// their agents in the request's context.
func authorize(token string, owned func(string) []string, guard *nip98.Guard, next http.Handler) http.Handler {
	operator := requireToken(token, next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scheme, _, _ := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
		if owned == nil || !strings.EqualFold(scheme, "Nostr") {
			operator.ServeHTTP(w, r)
			return
		}
		var agents []string
		_, err := guard.VerifyFor(r, func(pk string) error {
			if agents = owned(pk); len(agents) == 0 {
				return errNoAgents
			}
			return nil
		})
		switch {
		case errors.Is(err, errNoAgents):
			writeError(w, nil, r, http.StatusForbidden, "forbidden", err)
			return
		case err != nil:
			w.Header().Set("WWW-Authenticate", `Nostr realm="agentnode"`)
			writeError(w, nil, r, http.StatusUnauthorized, "unauthorized", err)
			return
		}
		keys := make(map[string]bool, len(agents))
		for _, a := range agents {
			keys[a] = true
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), scopeKey{}, keys)))
	})
}

// errNoAgents: the NIP-98 signer owns no agent here.
var errNoAgents = errors.New("consent API: no agent on this node names this key as its owner")
