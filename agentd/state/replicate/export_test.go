package replicate

import (
	"context"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd/state/store"
)

// StaticDirectory is a fixed owner -> agents table (tests).
type StaticDirectory map[string][]string

// Agents returns d[owner].
func (d StaticDirectory) Agents(_ context.Context, owner string) ([]string, error) {
	return d[owner], nil
}

// open checks evt (kind, id, signature, tags), decrypts it if it is
// addressed to keys' owner and decodes its envelopes, which must all
// belong to the batch the tags name. It does not decide trust.
func open(keys *keyring, evt *nostr.Event) (batchHead, []store.Envelope, error) {
	h, plain, err := openPlain(keys, evt)
	if err != nil {
		return h, nil, err
	}
	envs, err := decodeBatch(h, evt, plain)
	return h, envs, err
}
