package relay

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/agentnode/agentnode/events"
)

// routes registers the HTTP API beside the websocket endpoint.
//
//	GET /api/verify/{agent}        one agent's owner verification
//	GET /api/owners/{owner}/agents every agent linked to an owner, verified
//	GET /healthz                   liveness
//	GET /readyz                    readiness: the store (and PostgreSQL, its listener) answer (ready.go)
func (r *Relay) routes(mux *http.ServeMux) {
	mux.HandleFunc("GET /api/verify/{agent}", r.handleVerify)
	mux.HandleFunc("GET /api/owners/{owner}/agents", r.handleOwnerAgents)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"ok": true})
	})
	mux.HandleFunc("GET /readyz", r.handleReady)
	mux.HandleFunc("GET /{$}", r.handleIndex)
}

func (r *Relay) handleVerify(w http.ResponseWriter, req *http.Request) {
	agent, err := events.ParsePubKey(req.PathValue("agent"))
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "agent: " + err.Error()})
		return
	}
	v, err := VerifyAgent(withProfileHints(req.Context(), req.PathValue("agent")), r.verifier(), agent)
	if err != nil {
		r.log.Error("verify failed", "agent", agent, "err", err)
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": "verification failed"})
		return
	}
	writeJSON(w, http.StatusOK, v)
}

func (r *Relay) handleOwnerAgents(w http.ResponseWriter, req *http.Request) {
	owner, err := events.ParsePubKey(req.PathValue("owner"))
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "owner: " + err.Error()})
		return
	}
	list, err := OwnerAgents(withProfileHints(req.Context(), req.PathValue("owner")), r.verifier(), owner)
	if err != nil {
		r.log.Error("owner listing failed", "owner", owner, "err", err)
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": "listing failed"})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"owner": owner, "agents": list})
}

func (r *Relay) handleIndex(w http.ResponseWriter, req *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprintf(w, "agentnode %s: a Nostr relay for agents.\nConnect a Nostr client to ws://%s\nNIP-11: send Accept: application/nostr+json\nOwner verification: GET /api/verify/<npub or hex>\n",
		r.info().Version, req.Host)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}
