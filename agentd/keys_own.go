package agentd

// HasKey reports whether the daemon holds pubkey's secret key: one of its
// agents, installed or being installed. It takes no daemon lock, so a
// relay policy may call it while the daemon publishes (the relay's pubkey
// allowlist exempts the node's own agents).
func (d *Daemon) HasKey(pubkey string) bool {
	_, err := d.keys.Secret(pubkey)
	return err == nil
}
