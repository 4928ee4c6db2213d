package agentd

import "github.com/agentnode/agentnode/lessons"

// Ready returns the agent's composition as the background loop left it,
// without composing: ok is false while it is missing or stale.
func (d *Daemon) Ready(pubkey string) (eff lessons.Effective, ok bool) {
	st, found := d.live.state(pubkey)
	if !found {
		return lessons.Effective{}, false
	}
	gen, _, cur := d.live.snapshot(st)
	if cur == nil || cur.gen < gen {
		return lessons.Effective{}, false
	}
	return cur.eff, true
}
