package agentd

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/agentnode/agentnode/internal/httpauth"
	"github.com/agentnode/agentnode/internal/httplimit"
)

// maxBody bounds request bodies of the HTTP API.
const maxBody = 1 << 20

// Handler is the daemon's HTTP API, JSON in and out (docs/AGENTD.md). The
// serve command mounts it on the relay for /api/agents and /api/agents/.
// Reads (GET) are open: everything they show is derived from public
// events. Every other method needs "Authorization: Bearer <token>", the
// token in TokenPath(data dir): the relay answers CORS requests from any
// origin, so a web page must not be able to install agents or make them
// publish.
//
//	GET    /api/agents                          {"agents": [Agent]}
//	POST   /api/agents                          InstallRequest -> Installed (201 new, 200 existing)
//	GET    /api/agents/{agent}                  AgentView
//	DELETE /api/agents/{agent}[?retract=true]   Removed
//	GET    /api/agents/{agent}/effective[?nudge=ID...]  lessons.Effective
//	GET    /api/agents/{agent}/upgrade[?to=REF] UpgradePlan (not applied)
//	POST   /api/agents/{agent}/upgrade          {"to": REF or ""} -> UpgradePlan (applied)
//	PUT    /api/agents/{agent}/auto-upgrade     {"enabled": bool} -> Agent
//	PUT    /api/agents/{agent}/state-access     StateAccessRequest -> Agent
//	POST   /api/agents/{agent}/nudges           {"nudge": REF} -> NudgeChange
//	DELETE /api/agents/{agent}/nudges/{nudge}   NudgeChange
//	POST   /api/agents/{agent}/lessons          {"title","category","content"} -> the signed kind 4129 (201)
//	GET    /api/agents/{agent}/caps             {"caps": [InstalledCap]}
//	POST   /api/agents/{agent}/caps             CapInstallRequest -> CapChange (201 installed, 200 already)
//	POST   /api/agents/{agent}/caps/{cap}/upgrade  CapUpgradeRequest -> CapChange
//	DELETE /api/agents/{agent}/caps/{cap}       CapChange
//	POST   /api/agents/{agent}/chat             {"conversation","message"} -> ChatReply
//
// {agent} is an npub, hex pubkey or unambiguous name. Errors are
// {"error": message, "code": code} with the codes of APIError.
func (d *Daemon) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/agents", d.handleList)
	mux.HandleFunc("POST /api/agents", d.handleInstall)
	mux.HandleFunc("GET /api/agents/{agent}", d.handleShow)
	mux.HandleFunc("DELETE /api/agents/{agent}", d.handleRemove)
	mux.HandleFunc("GET /api/agents/{agent}/effective", d.handleEffective)
	mux.HandleFunc("GET /api/agents/{agent}/upgrade", d.handlePlanUpgrade)
	mux.HandleFunc("POST /api/agents/{agent}/upgrade", d.handleUpgrade)
	mux.HandleFunc("PUT /api/agents/{agent}/auto-upgrade", d.handleAutoUpgrade)
	mux.HandleFunc("PUT /api/agents/{agent}/state-access", d.handleStateAccess)
	mux.HandleFunc("POST /api/agents/{agent}/nudges", d.handleAddNudge)
	mux.HandleFunc("DELETE /api/agents/{agent}/nudges/{nudge}", d.handleRemoveNudge)
	mux.HandleFunc("POST /api/agents/{agent}/lessons", d.handleLearn)
	mux.HandleFunc("GET /api/agents/{agent}/caps", d.handleCaps)
	mux.HandleFunc("POST /api/agents/{agent}/caps", d.handleInstallCap)
	mux.HandleFunc("POST /api/agents/{agent}/caps/{cap}/upgrade", d.handleUpgradeCap)
	mux.HandleFunc("DELETE /api/agents/{agent}/caps/{cap}", d.handleRemoveCap)
	mux.HandleFunc("POST /api/agents/{agent}/chat", d.handleChat)
	mux.HandleFunc("POST /api/agents/{agent}/skills", d.handleInstallSkill) // skills_http.go
	mux.HandleFunc("GET /api/agents/{agent}/mcp", d.handleMCPServers)       // mcpservers_http.go
	mux.HandleFunc("POST /api/agents/{agent}/mcp", d.handleAddMCPServer)
	mux.HandleFunc("POST /api/agents/{agent}/mcp/{server}/decision", d.handleDecideMCPServer)
	return d.requireToken(mux)
}

// NudgeChange answers nudge additions and removals.
type NudgeChange struct {
	Agent   Agent `json:"agent"`
	Changed bool  `json:"changed"` // false: already attached / was not attached
}

// requireToken lets GET and HEAD through and checks the bearer token on
// every other method (internal/httpauth).
func (d *Daemon) requireToken(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			if err := httpauth.Check(w, r, d.token); err != nil {
				d.writeError(w, r, ErrUnauthorized)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

func (d *Daemon) handleList(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"agents": d.List()})
}

func (d *Daemon) handleInstall(w http.ResponseWriter, r *http.Request) {
	var req InstallRequest
	if !d.decode(w, r, &req) {
		return
	}
	res, err := d.Install(r.Context(), req)
	status := http.StatusOK
	if res.Created {
		status = http.StatusCreated
	}
	d.reply(w, r, status, res, err)
}

func (d *Daemon) handleShow(w http.ResponseWriter, r *http.Request) {
	v, err := d.Show(r.Context(), r.PathValue("agent"))
	d.reply(w, r, http.StatusOK, v, err)
}

func (d *Daemon) handleRemove(w http.ResponseWriter, r *http.Request) {
	retract, _ := strconv.ParseBool(r.URL.Query().Get("retract"))
	res, err := d.Remove(r.Context(), r.PathValue("agent"), retract)
	d.reply(w, r, http.StatusOK, res, err)
}

func (d *Daemon) handleEffective(w http.ResponseWriter, r *http.Request) {
	eff, err := d.EffectiveFor(r.Context(), r.PathValue("agent"), r.URL.Query()["nudge"])
	d.reply(w, r, http.StatusOK, eff, err)
}

func (d *Daemon) handlePlanUpgrade(w http.ResponseWriter, r *http.Request) {
	plan, err := d.PlanUpgrade(r.Context(), r.PathValue("agent"), r.URL.Query().Get("to"))
	d.reply(w, r, http.StatusOK, plan, err)
}

func (d *Daemon) handleUpgrade(w http.ResponseWriter, r *http.Request) {
	var req struct {
		To string `json:"to"`
	}
	if !d.decode(w, r, &req) {
		return
	}
	plan, err := d.Upgrade(r.Context(), r.PathValue("agent"), req.To)
	d.reply(w, r, http.StatusOK, plan, err)
}

func (d *Daemon) handleAutoUpgrade(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Enabled *bool `json:"enabled"`
	}
	if !d.decode(w, r, &req) {
		return
	}
	if req.Enabled == nil {
		d.writeError(w, r, fmt.Errorf("%w: enabled (true or false) is required", ErrBadRequest))
		return
	}
	a, err := d.SetAutoUpgrade(r.Context(), r.PathValue("agent"), *req.Enabled)
	d.reply(w, r, http.StatusOK, a, err)
}

func (d *Daemon) handleAddNudge(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Nudge string `json:"nudge"`
	}
	if !d.decode(w, r, &req) {
		return
	}
	a, changed, err := d.AddNudge(r.Context(), r.PathValue("agent"), req.Nudge)
	d.reply(w, r, http.StatusOK, NudgeChange{Agent: a, Changed: changed}, err)
}

func (d *Daemon) handleRemoveNudge(w http.ResponseWriter, r *http.Request) {
	a, changed, err := d.RemoveNudge(r.Context(), r.PathValue("agent"), r.PathValue("nudge"))
	d.reply(w, r, http.StatusOK, NudgeChange{Agent: a, Changed: changed}, err)
}

func (d *Daemon) handleLearn(w http.ResponseWriter, r *http.Request) {
	var req learnArgs
	if !d.decode(w, r, &req) {
		return
	}
	evt, err := d.Learn(r.Context(), r.PathValue("agent"), req.Title, req.Category, req.Content)
	d.reply(w, r, http.StatusCreated, evt, err)
}

// decode reads a JSON body into v (unknown fields refused); on failure it
// answers 400 (413 over maxBody or a bound set in front) and returns false.
func (d *Daemon) decode(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if httplimit.TooLarge(err) {
		d.writeError(w, r, fmt.Errorf("%w: at most %d bytes", ErrTooLarge, maxBody))
		return false
	}
	if err != nil && !errors.Is(err, io.EOF) {
		d.writeError(w, r, fmt.Errorf("%w: body: %v", ErrBadRequest, err))
		return false
	}
	return true
}

// reply writes v with status, or the error.
func (d *Daemon) reply(w http.ResponseWriter, r *http.Request, status int, v any, err error) {
	if err != nil {
		d.writeError(w, r, err)
		return
	}
	writeJSON(w, status, v)
}

// writeError answers with err's code. Internal errors are logged and
// answered without their text.
func (d *Daemon) writeError(w http.ResponseWriter, r *http.Request, err error) {
	c := codeOf(err)
	msg := err.Error()
	if c.err == ErrInternal {
		d.log.Error("agent API", "method", r.Method, "path", r.URL.Path, "err", err)
		msg = ErrInternal.Error()
	}
	writeJSON(w, c.status, APIError{Code: c.code, Message: msg})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}
