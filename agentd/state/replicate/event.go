package replicate

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip44"

	"github.com/agentnode/agentnode/agentd/state/schema"
	"github.com/agentnode/agentnode/agentd/state/store"
)

// Kind is the ASM op envelope: a regular event whose content is a batch of
// op-log envelopes of one schema, memory scope and owner (docs/KINDS.md).
const Kind = 4290

// Tag names of a kind-4290 event.
const (
	TagScope   = "scope"   // memory scope of every envelope in the batch
	TagSchema  = "schema"  // schema URI of every envelope
	TagNS      = "ns"      // the namespace's table prefix (cap_note, core, ...)
	TagVis     = "v"       // the schema's visibility: private | shared | public
	TagOwner   = "owner"   // the documents' owner pubkey
	TagReplica = "replica" // the replica whose ops these are
)

// MaxPlaintext is the largest batch NIP-44 v2 can encrypt.
const MaxPlaintext = nip44.MaxPlaintextSize

// MaxSealedPlaintext is the largest batch whose NIP-44 v2 payload still
// fits an event content of 65,535 bytes, the relays' limit (ours:
// relay.Config's MaxContentBytes; strfry's default is 65,536): 40,960
// bytes pad to 40,960 and encrypt to 54,704 base64 characters, 40,961
// pad to 49,152 and encrypt to 65,628. Batches of MaxPlaintext (65,535)
// were refused by the relay as soon as many ops were pushed at once.
const MaxSealedPlaintext = 40_960

// batchHead is what the tags of one event say about its batch.
type batchHead struct {
	NS, Schema, Scope, Owner, Vis, Replica string
}

func (h batchHead) tags() nostr.Tags {
	return nostr.Tags{
		{TagScope, h.Scope}, {TagSchema, h.Schema}, {TagNS, h.NS}, {TagVis, h.Vis},
		{TagOwner, h.Owner}, {TagReplica, h.Replica},
		{"alt", "Agent State Model op batch (" + h.Vis + ")"},
	}
}

func headOf(evt *nostr.Event) (batchHead, error) {
	get := func(name string) string {
		if t := evt.Tags.Find(name); t != nil {
			return t[1]
		}
		return ""
	}
	h := batchHead{NS: get(TagNS), Schema: get(TagSchema), Scope: get(TagScope), Owner: get(TagOwner),
		Vis: get(TagVis), Replica: get(TagReplica)}
	switch {
	case h.Schema == "" || h.Owner == "" || h.Replica == "":
		return h, fmt.Errorf("%w: schema, owner and replica tags are required", ErrBadEvent)
	case !slices.Contains([]string{schema.Private, schema.Shared, schema.Public}, h.Vis):
		return h, fmt.Errorf("%w: visibility %q", ErrBadEvent, h.Vis)
	}
	return h, nil
}

// readersOf returns the p tags of evt.
func readersOf(evt *nostr.Event) []string {
	var out []string
	for _, t := range evt.Tags {
		if len(t) >= 2 && t[0] == "p" {
			out = append(out, t[1])
		}
	}
	return out
}

// encodeBatches splits envs (all of one batchHead) into JSON arrays of at
// most limit bytes each. An envelope that alone exceeds limit is returned
// in tooLarge.
func encodeBatches(envs []store.Envelope, limit int) (batches [][]byte, tooLarge []store.Envelope, err error) {
	cur := []byte{'['}
	for _, e := range envs {
		e.Seq = 0
		b, err := json.Marshal(e)
		if err != nil {
			return nil, nil, fmt.Errorf("replicate: encode op: %w", err)
		}
		if len(b)+2 > limit {
			tooLarge = append(tooLarge, e)
			continue
		}
		if len(cur)+len(b)+1 > limit {
			batches = append(batches, append(cur, ']'))
			cur = []byte{'['}
		}
		if len(cur) > 1 {
			cur = append(cur, ',')
		}
		cur = append(cur, b...)
	}
	if len(cur) > 1 {
		batches = append(batches, append(cur, ']'))
	}
	return batches, tooLarge, nil
}

// seal builds and signs one event carrying batch: plaintext when reader is
// "" (public), else NIP-44 v2 encrypted to reader with a ["p", reader] tag.
func seal(keys *keyring, h batchHead, batch []byte, reader string, at nostr.Timestamp) (*nostr.Event, error) {
	return sealTagged(keys, h.tags(), batch, reader, at)
}

// sealTagged is seal with the event's tags given (the reader's p is added).
func sealTagged(keys *keyring, tags nostr.Tags, batch []byte, reader string, at nostr.Timestamp) (*nostr.Event, error) {
	evt := &nostr.Event{Kind: Kind, CreatedAt: at, Tags: slices.Clip(tags), Content: string(batch)} // the p below must not land in the caller's array
	if reader != "" {
		ck, err := keys.conversation(reader)
		if err != nil {
			return nil, err
		}
		if evt.Content, err = nip44.Encrypt(string(batch), ck); err != nil {
			return nil, fmt.Errorf("replicate: encrypt: %w", err)
		}
		evt.Tags = append(evt.Tags, nostr.Tag{"p", reader})
	}
	if err := evt.Sign(keys.sk); err != nil {
		return nil, fmt.Errorf("replicate: sign: %w", err)
	}
	return evt, nil
}

// openPlain checks evt (kind, id, signature, tags) and returns its
// content, decrypted if it is addressed to keys' owner.
func openPlain(keys *keyring, evt *nostr.Event) (batchHead, string, error) {
	if evt.Kind != Kind {
		return batchHead{}, "", fmt.Errorf("%w: kind %d", ErrBadEvent, evt.Kind)
	}
	if !evt.CheckID() {
		return batchHead{}, "", fmt.Errorf("%w: id does not match", ErrBadEvent)
	}
	if ok, err := evt.CheckSignature(); err != nil || !ok {
		return batchHead{}, "", fmt.Errorf("%w: bad signature", ErrBadEvent)
	}
	h, err := headOf(evt)
	if err != nil {
		return h, "", err
	}
	plain, err := plaintext(keys, evt, h)
	return h, plain, err
}

// decodeBatch decodes a batch's content (uncompressed per its codec tag);
// every envelope must belong to the batch the tags name.
func decodeBatch(h batchHead, evt *nostr.Event, plain string) ([]store.Envelope, error) {
	var err error
	if t := evt.Tags.Find(TagCodec); t != nil {
		if plain, err = uncompress(t[1], plain); err != nil {
			return nil, err
		}
	}
	var envs []store.Envelope
	if err := json.Unmarshal([]byte(plain), &envs); err != nil {
		return nil, fmt.Errorf("%w: content is not a batch of envelopes", ErrBadEvent)
	}
	for i := range envs {
		e := &envs[i]
		e.Seq = 0
		if e.Schema != h.Schema || e.Owner != h.Owner || e.Scope != h.Scope {
			return nil, fmt.Errorf("%w: envelope %s does not belong to the batch its tags name", ErrBadEvent, e.OpID())
		}
	}
	return envs, nil
}

// plaintext returns evt's batch: the content of a public event, the
// decrypted content of one addressed to keys' owner.
func plaintext(keys *keyring, evt *nostr.Event, h batchHead) (string, error) {
	readers := readersOf(evt)
	repair := evt.Tags.Find(TagASM) != nil // repairs are encrypted to one peer, public state too
	switch {
	case len(readers) == 0 && h.Vis == schema.Public:
		return evt.Content, nil
	case len(readers) == 0 || (h.Vis == schema.Public && !repair):
		return "", fmt.Errorf("%w: %s batch with %d readers", ErrBadEvent, h.Vis, len(readers))
	}
	return decryptFor(keys, evt)
}

// decryptFor decrypts an event whose p tags must include keys' owner.
func decryptFor(keys *keyring, evt *nostr.Event) (string, error) {
	if !slices.Contains(readersOf(evt), keys.pk) {
		return "", ErrNotForUs
	}
	ck, err := keys.conversation(evt.PubKey)
	if err != nil {
		return "", err
	}
	plain, err := nip44.Decrypt(evt.Content, ck)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrUndecryptable, err)
	}
	return plain, nil
}
