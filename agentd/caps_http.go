package agentd

import "net/http"

// ChatRequest is the body of POST /api/agents/{agent}/chat.
type ChatRequest struct {
	Conversation string `json:"conversation,omitempty"` // "" = DefaultConversation
	Message      string `json:"message"`
}

func (d *Daemon) handleCaps(w http.ResponseWriter, r *http.Request) {
	caps, err := d.Caps(r.Context(), r.PathValue("agent"))
	d.reply(w, r, http.StatusOK, map[string]any{"caps": caps}, err)
}

func (d *Daemon) handleInstallCap(w http.ResponseWriter, r *http.Request) {
	var req CapInstallRequest
	if !d.decode(w, r, &req) {
		return
	}
	res, err := d.InstallCap(r.Context(), r.PathValue("agent"), req)
	status := http.StatusOK
	if res.Changed {
		status = http.StatusCreated
	}
	d.reply(w, r, status, res, err)
}

func (d *Daemon) handleUpgradeCap(w http.ResponseWriter, r *http.Request) {
	var req CapUpgradeRequest
	if !d.decode(w, r, &req) {
		return
	}
	res, err := d.UpgradeCap(r.Context(), r.PathValue("agent"), r.PathValue("cap"), req)
	d.reply(w, r, http.StatusOK, res, err)
}

func (d *Daemon) handleRemoveCap(w http.ResponseWriter, r *http.Request) {
	res, err := d.RemoveCap(r.Context(), r.PathValue("agent"), r.PathValue("cap"))
	d.reply(w, r, http.StatusOK, res, err)
}

func (d *Daemon) handleChat(w http.ResponseWriter, r *http.Request) {
	var req ChatRequest
	if !d.decode(w, r, &req) {
		return
	}
	res, err := d.Chat(r.Context(), r.PathValue("agent"), req.Conversation, req.Message)
	d.reply(w, r, http.StatusOK, res, err)
}
