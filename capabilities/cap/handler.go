package cap

import (
	"context"
	"net/http"

	"github.com/agentnode/agentnode/internal/httpauth"
	"github.com/agentnode/agentnode/jsonrpc"
)

type agentPathKey struct{}

// Handler is the CAP JSON-RPC endpoint for one agent per URL: mount it at
// a pattern with an {agent} wildcard (e.g. "/cap/agents/{agent}"); the
// agent is that path segment, after authorize accepts the request (nil
// authorize refuses everything with 401; serve checks the node's API token
// with internal/httpauth). POST and WebSocket, per
// jsonrpc.Server.
func Handler(h *Host, authorize func(r *http.Request, agent string) error, opts jsonrpc.Options) http.Handler {
	s := jsonrpc.NewServer(opts)
	RegisterJSONRPC(s, h, func(ctx context.Context) (string, error) {
		agent, _ := ctx.Value(agentPathKey{}).(string)
		return agent, nil
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		agent := r.PathValue("agent")
		if agent == "" || authorize == nil || authorize(r, agent) != nil {
			w.Header().Set("WWW-Authenticate", httpauth.Challenge)
			http.Error(w, "cap: unauthorized", http.StatusUnauthorized)
			return
		}
		s.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), agentPathKey{}, agent)))
	})
}
