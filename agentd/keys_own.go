package agentd

import "context"

// HasKey reports whether the daemon holds pubkey's secret key: one of its
// agents, installed or being installed. It takes no daemon lock, so a
// relay policy may call it while the daemon publishes (the relay's pubkey
// allowlist exempts the node's own agents). ctx bounds the keystore read
// (the relay passes the publishing connection's).
func (d *Daemon) HasKey(ctx context.Context, pubkey string) bool {
	_, err := d.keys.Secret(ctx, pubkey)
	return err == nil
}
