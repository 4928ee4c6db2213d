package agentd

import (
	"context"
	"net/http"
)

// handleInstallSkill is POST /api/agents/{agent}/skills.
func (d *Daemon) handleInstallSkill(w http.ResponseWriter, r *http.Request) {
	var req SkillInstallRequest
	if !d.decode(w, r, &req) {
		return
	}
	res, err := d.InstallSkill(r.Context(), r.PathValue("agent"), req)
	d.reply(w, r, http.StatusOK, res, err)
}

// InstallSkill installs a skill on the agent (see Daemon.InstallSkill).
func (c *Client) InstallSkill(ctx context.Context, agent string, req SkillInstallRequest) (InstalledSkill, error) {
	var out InstalledSkill
	return out, c.do(ctx, http.MethodPost, agentPath(agent, "/skills"), req, &out)
}
