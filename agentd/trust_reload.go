package agentd

import (
	"fmt"

	"github.com/agentnode/agentnode/lessons"
)

// SetTrust replaces the lesson trust policy (a SIGHUP reload): every
// agent is recomposed under it by Run, and until then Effective
// recomposes on demand. It returns the policy in force before and after
// (their String forms, for the log); a policy that does not build leaves
// the old one in force.
func (d *Daemon) SetTrust(cfg lessons.Config) (before, after string, err error) {
	p, err := lessons.NewPolicy(cfg)
	if err != nil {
		return "", "", fmt.Errorf("agentd: trust: %w", err)
	}
	old := d.policy.Swap(p)
	if old.Fingerprint() == p.Fingerprint() {
		return old.String(), p.String(), nil
	}
	d.live.dirtyAll()
	d.signal()
	return old.String(), p.String(), nil
}

// dirtyAll marks every agent's composition stale.
func (l *live) dirtyAll() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, st := range l.agents {
		st.dirty++
	}
}
