package acp

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"

	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/btcec/v2/schnorr"
	"gopkg.in/yaml.v3"

	"github.com/agentnode/agentnode/events"
)

// Verify checks metadata.signature and returns the author's pubkey (64-hex).
// The signature is BIP-340 by pubkey over sha256 of the file with the sig
// value blanked: the first occurrence of its 128 hex characters removed
// (docs/ACP.md). Errors: ErrUnsigned, ErrBadSignature (wrapped with the
// reason), or a *ParseError when the file is not YAML.
func Verify(raw []byte) (pubkey string, err error) {
	defer func() {
		if r := recover(); r != nil {
			pubkey, err = "", fmt.Errorf("%w: unreadable YAML", ErrBadSignature)
		}
	}()
	sig, err := readSignature(raw)
	if err != nil {
		return "", err
	}
	blanked, ok := blank(raw, sig.Sig)
	if !ok {
		return "", fmt.Errorf("%w: sig value not found in the file", ErrBadSignature)
	}
	if !checkSchnorr(sig.PubKey, sig.Sig, blanked) {
		return "", fmt.Errorf("%w: does not verify for pubkey %s (the file changed after signing?)", ErrBadSignature, sig.PubKey)
	}
	return sig.PubKey, nil
}

// Digest returns sha256 of the blanked file: what the signature signs.
func Digest(raw []byte, sig string) ([32]byte, bool) {
	b, ok := blank(raw, sig)
	if !ok {
		return [32]byte{}, false
	}
	return sha256.Sum256(b), true
}

// blank removes the first occurrence of sig from raw.
func blank(raw []byte, sig string) ([]byte, bool) {
	i := bytes.Index(raw, []byte(sig))
	if sig == "" || i < 0 {
		return nil, false
	}
	out := make([]byte, 0, len(raw)-len(sig))
	out = append(out, raw[:i]...)
	return append(out, raw[i+len(sig):]...), true
}

// readSignature finds metadata.signature and checks its shape.
func readSignature(raw []byte) (*Signature, error) {
	root, prob := decodeDoc(raw)
	if prob != nil {
		return nil, &ParseError{Problems: []Problem{*prob}}
	}
	meta := mapValue(root, "metadata")
	if meta == nil {
		return nil, fmt.Errorf("%w: no metadata section", ErrUnsigned)
	}
	n := mapValue(meta, "signature")
	if n == nil {
		return nil, ErrUnsigned
	}
	return signatureOf(n)
}

func signatureOf(n *yaml.Node) (*Signature, error) {
	if n.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%w: line %d: metadata.signature: must be a mapping {pubkey, sig}", ErrBadSignature, n.Line)
	}
	s := &Signature{}
	pk, sig := mapValue(n, "pubkey"), mapValue(n, "sig")
	if pk == nil || pk.Kind != yaml.ScalarNode || !hex64RE.MatchString(pk.Value) {
		return nil, fmt.Errorf("%w: line %d: metadata.signature.pubkey: not a 64-hex pubkey", ErrBadSignature, n.Line)
	}
	if sig == nil || sig.Kind != yaml.ScalarNode || !hex128RE.MatchString(sig.Value) {
		return nil, fmt.Errorf("%w: line %d: metadata.signature.sig: not a 128-hex signature", ErrBadSignature, n.Line)
	}
	s.PubKey, s.Sig = pk.Value, sig.Value
	return s, nil
}

// mapValue returns the value of key in mapping n, or nil.
func mapValue(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

func checkSchnorr(pubkeyHex, sigHex string, msg []byte) bool {
	pkb, err1 := hex.DecodeString(pubkeyHex)
	sb, err2 := hex.DecodeString(sigHex)
	if err1 != nil || err2 != nil {
		return false
	}
	pk, err := schnorr.ParsePubKey(pkb)
	if err != nil {
		return false
	}
	sig, err := schnorr.ParseSignature(sb)
	if err != nil {
		return false
	}
	h := sha256.Sum256(msg)
	return sig.Verify(h[:], pk)
}

// Sign writes metadata.signature into the file and returns the signed
// bytes. The rest of the file is kept byte for byte: an existing signature
// entry is replaced where it stands, else the entry is added as the last
// field of metadata. secretKey is 64-hex or an nsec. metadata must be a
// block mapping.
func Sign(raw []byte, secretKey string) ([]byte, error) {
	sk, err := events.ParseSecretKey(secretKey)
	if err != nil {
		return nil, fmt.Errorf("acp: sign: %w", err)
	}
	skb, _ := hex.DecodeString(sk)
	priv, pub := btcec.PrivKeyFromBytes(skb)
	pubHex := hex.EncodeToString(schnorr.SerializePubKey(pub))
	ed, err := newSigEdit(raw)
	if err != nil {
		return nil, err
	}
	unsigned := ed.render(pubHex, "")
	h := sha256.Sum256(unsigned)
	sig, err := schnorr.Sign(priv, h[:])
	if err != nil {
		return nil, fmt.Errorf("acp: sign: %w", err)
	}
	out := ed.render(pubHex, hex.EncodeToString(sig.Serialize()))
	if got, err := Verify(out); err != nil || got != pubHex {
		return nil, fmt.Errorf("acp: sign: the signed file does not verify (%v)", err)
	}
	if !sameContent(raw, out) {
		return nil, fmt.Errorf("acp: sign: adding the signature would change the package (a block scalar with kept trailing lines ends metadata?)")
	}
	return out, nil
}

// sameContent reports whether two files hold the same YAML values once
// metadata.signature is set aside.
func sameContent(a, b []byte) bool {
	va, errA := valueWithoutSignature(a)
	vb, errB := valueWithoutSignature(b)
	return errA == nil && errB == nil && reflect.DeepEqual(va, vb)
}

func valueWithoutSignature(raw []byte) (any, error) {
	root, prob := decodeDoc(raw)
	if prob != nil {
		return nil, errors.New(prob.String())
	}
	v, err := toAny(root)
	if err != nil {
		return nil, err
	}
	if meta, ok := v.(map[string]any)["metadata"].(map[string]any); ok {
		delete(meta, "signature")
	}
	return v, nil
}
