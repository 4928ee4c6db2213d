// Package httpauth is the node's one bearer-token check, used by every
// HTTP endpoint that acts for the node's agents (the agent API, consent,
// /acp, CAP, the MCP agent endpoints), and its NIP-98 check (Nostr,
// nip98.go): "Authorization: Nostr <base64 event>" signed by a person's
// own key, bounded and replay-guarded, as the web console's owner sign-in
// uses it:
//
//	v := httpauth.NewNostr(nil)
//	pubkey, err := v.VerifyFor(r, ownsAnAgent) // only admitted keys are remembered
//
// The rules, the same everywhere:
//
//   - an empty configured token refuses every request (it never means
//     "no check");
//   - the header is "Authorization: Bearer <token>", the scheme in any case;
//   - the comparison is constant-time (crypto/subtle);
//   - a refusal carries WWW-Authenticate: Bearer realm="agentnode".
//
// A use:
//
//	mux.Handle("/acp", httpauth.Require(token, acpHandler))
//
// or, for an endpoint that answers 401 in its own format:
//
//	if err := httpauth.Check(w, r, token); err != nil {
//		writeMyError(w, http.StatusUnauthorized, err)
//		return
//	}
package httpauth
