// Package httpauth is the node's one bearer-token check, used by every
// HTTP endpoint that acts for the node's agents (the agent API, consent,
// /acp, CAP, the MCP agent endpoints). NIP-98 ("Authorization: Nostr")
// is internal/nip98's.
//
// The rules, the same everywhere:
//
//   - an empty configured token refuses every request (it never means
//     "no check");
//   - the header is "Authorization: Bearer <token>", the scheme in any case;
//   - the comparison is constant-time (crypto/subtle);
//   - a refusal carries WWW-Authenticate: Bearer realm="agentnode".
//
// A use, in an endpoint that answers 401 in its own format (or with
// httpauth.Refuse's plain text):
//
//	if err := httpauth.Check(w, r, token); err != nil {
//		writeMyError(w, http.StatusUnauthorized, err)
//		return
//	}
package httpauth
