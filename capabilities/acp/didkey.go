package acp

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/btcec/v2/schnorr"
	"github.com/multiformats/go-multibase"
	"github.com/multiformats/go-multicodec"
	"github.com/multiformats/go-varint"
)

// Signature forms (`agentnode cap sign --format`).
const (
	// SigFormNostr is agentnode's mapping {pubkey, sig}: BIP-340 by a
	// Nostr key.
	SigFormNostr = "nostr"
	// SigFormDIDKey is the spec's string form, written by agentnode as a
	// DID URL: "did:key:<multibase key>#<multibase signature>", the key
	// secp256k1 (the signer's Nostr key, BIP-340).
	SigFormDIDKey = "did-key"
	// SigFormDIDKeyEd25519 is SigFormDIDKey with an Ed25519 key (the
	// 32-byte secret taken as its seed).
	SigFormDIDKeyEd25519 = "did-key-ed25519"
)

// SigFormats lists the forms Sign writes.
func SigFormats() []string { return []string{SigFormNostr, SigFormDIDKey, SigFormDIDKeyEd25519} }

// Key types of a signer.
const (
	KeySecp256k1 = "secp256k1"
	KeyEd25519   = "ed25519"
)

// Signer is who signed a package and in which form.
type Signer struct {
	Form    string `json:"form"`             // SigFormNostr or SigFormDIDKey
	KeyType string `json:"key_type"`         // KeySecp256k1 or KeyEd25519
	PubKey  string `json:"pubkey,omitempty"` // secp256k1: the 64-hex x-only key (a Nostr pubkey)
	DID     string `json:"did"`              // the key as did:key:z…
}

// ID is how the node names the author: the Nostr pubkey of a secp256k1
// signer, else the did:key.
func (s Signer) ID() string {
	if s.PubKey != "" {
		return s.PubKey
	}
	return s.DID
}

// didKey is a decoded did:key.
type didKey struct {
	typ string
	key []byte // secp256k1: 32-byte x-only; ed25519: 32 bytes
}

// parseDIDKey reads did:key:<multibase(multicodec key)>. Any multibase
// encoding is read; secp256k1-pub (33-byte compressed, or 32-byte x-only)
// and ed25519-pub are the key types verified.
func parseDIDKey(did string) (didKey, error) {
	mb, ok := strings.CutPrefix(did, "did:key:")
	if !ok {
		return didKey{}, fmt.Errorf("%q is not a did:key (only did:key is resolved here)", did)
	}
	_, data, err := multibase.Decode(mb)
	if err != nil {
		return didKey{}, fmt.Errorf("did:key: not multibase: %v", err)
	}
	code, n, err := varint.FromUvarint(data)
	if err != nil {
		return didKey{}, fmt.Errorf("did:key: no multicodec prefix: %v", err)
	}
	return keyOf(multicodec.Code(code), data[n:])
}

func keyOf(code multicodec.Code, key []byte) (didKey, error) {
	switch {
	case code == multicodec.Ed25519Pub && len(key) == ed25519.PublicKeySize:
		return didKey{typ: KeyEd25519, key: key}, nil
	case code == multicodec.Secp256k1Pub && len(key) == 33:
		pk, err := btcec.ParsePubKey(key)
		if err != nil {
			return didKey{}, fmt.Errorf("did:key: secp256k1 key: %v", err)
		}
		return didKey{typ: KeySecp256k1, key: schnorr.SerializePubKey(pk)}, nil
	case code == multicodec.Secp256k1Pub && len(key) == 32:
		if _, err := schnorr.ParsePubKey(key); err != nil {
			return didKey{}, fmt.Errorf("did:key: secp256k1 key: %v", err)
		}
		return didKey{typ: KeySecp256k1, key: key}, nil
	case code == multicodec.Ed25519Pub || code == multicodec.Secp256k1Pub:
		return didKey{}, fmt.Errorf("did:key: %s key of %d bytes", code, len(key))
	}
	return didKey{}, fmt.Errorf("did:key: multicodec 0x%x (%s) is not a key type verified here (secp256k1-pub, ed25519-pub)", uint64(code), code)
}

// encodeDIDKey writes did:key:z<base58btc(multicodec || key)>.
func encodeDIDKey(code multicodec.Code, key []byte) string {
	s, _ := multibase.Encode(multibase.Base58BTC, append(varint.ToUvarint(uint64(code)), key...))
	return "did:key:" + s
}

// secpDID is the did:key of a 64-hex x-only key (compressed, even y).
func secpDID(xonly string) string {
	b, err := hex.DecodeString(xonly)
	if err != nil || len(b) != 32 {
		return ""
	}
	return encodeDIDKey(multicodec.Secp256k1Pub, append([]byte{2}, b...))
}

// splitDIDSig splits the DID-key string form into the signer's DID and the
// multibase signature: "did:key:…#z…", or a bare "z…" whose signer is
// metadata.author (the spec: "signed by author DID key").
func splitDIDSig(value, author string) (did, mbSig string, err error) {
	if d, s, ok := strings.Cut(value, "#"); ok {
		return d, s, nil
	}
	if !strings.HasPrefix(author, "did:key:") {
		return "", "", fmt.Errorf("a bare multibase signature needs metadata.author to be the signer's did:key (it is %q)", author)
	}
	return author, value, nil
}

// verifyDIDKey checks the DID-key string form: the multibase signature,
// over sha256 of the file with that signature removed, by the DID's key
// (BIP-340 for secp256k1, Ed25519 over the 32-byte digest).
func verifyDIDKey(raw []byte, value, author string) (Signer, error) {
	did, mbSig, err := splitDIDSig(value, author)
	if err != nil {
		return Signer{}, fmt.Errorf("%w: %v", ErrBadSignature, err)
	}
	k, err := parseDIDKey(did)
	if err != nil {
		return Signer{}, fmt.Errorf("%w: %v", ErrBadSignature, err)
	}
	_, sig, err := multibase.Decode(mbSig)
	if err != nil || len(sig) != 64 {
		return Signer{}, fmt.Errorf("%w: %q is not a multibase 64-byte signature", ErrBadSignature, mbSig)
	}
	blanked, ok := blank(raw, mbSig)
	if !ok {
		return Signer{}, fmt.Errorf("%w: signature value not found in the file", ErrBadSignature)
	}
	s := Signer{Form: SigFormDIDKey, KeyType: k.typ, DID: did}
	if !checkKey(k, sig, blanked) {
		return Signer{}, fmt.Errorf("%w: does not verify for %s (the file changed after signing?)", ErrBadSignature, did)
	}
	if k.typ == KeySecp256k1 {
		s.PubKey = hex.EncodeToString(k.key)
	}
	return s, nil
}

func checkKey(k didKey, sig, msg []byte) bool {
	h := sha256.Sum256(msg)
	if k.typ == KeyEd25519 {
		return ed25519.Verify(k.key, h[:], sig)
	}
	return checkSchnorr(hex.EncodeToString(k.key), hex.EncodeToString(sig), msg)
}

// NostrKeyOfDID returns the Nostr public key (64-hex, x-only) a
// secp256k1 did:key names; an Ed25519 did:key names none.
func NostrKeyOfDID(did string) (string, error) {
	k, err := parseDIDKey(did)
	if err != nil {
		return "", err
	}
	if k.typ != KeySecp256k1 {
		return "", fmt.Errorf("%s is an %s key: it names no Nostr key", clipDID(did), k.typ)
	}
	return hex.EncodeToString(k.key), nil
}

func clipDID(did string) string {
	if len(did) > 60 {
		return did[:60] + "…"
	}
	return did
}
