package agentd

import "context"

// HasKey reports whether the daemon holds pubkey's secret key: one of its
// agents, installed or being installed. It takes no daemon lock, so a
// relay policy may call it while the daemon publishes (the relay's pubkey
// allowlist exempts the node's own agents). The relay's predicate carries
// no context: the read is bounded by the keystore (agentd/agentpg: 30 s).
func (d *Daemon) HasKey(pubkey string) bool {
	_, err := d.keys.Secret(context.Background(), pubkey)
	return err == nil
}
