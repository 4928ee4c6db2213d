package acp

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/btcec/v2/schnorr"
	"github.com/multiformats/go-multibase"
	"github.com/multiformats/go-multicodec"
	"gopkg.in/yaml.v3"

	"github.com/agentnode/agentnode/events"
)

// Verify checks metadata.signature and returns the author: the 64-hex
// Nostr pubkey of a secp256k1 signer, else the signer's did:key (see
// VerifySigner). Errors: ErrUnsigned, ErrBadSignature (wrapped with the
// reason), or a *ParseError when the file is not YAML.
func Verify(raw []byte) (string, error) {
	s, err := VerifySigner(raw)
	if err != nil {
		return "", err
	}
	return s.ID(), nil
}

// VerifySigner checks metadata.signature in either form (docs/ACP.md) and
// says who signed and how. The mapping {pubkey, sig} is BIP-340 by pubkey
// over sha256 of the file with the sig value blanked (the first occurrence
// of its 128 hex characters removed); the DID-key string signs the same
// digest with the multibase signature removed.
func VerifySigner(raw []byte) (signer Signer, err error) {
	defer func() {
		if r := recover(); r != nil {
			signer, err = Signer{}, fmt.Errorf("%w: unreadable YAML", ErrBadSignature)
		}
	}()
	sig, author, err := readSignature(raw)
	if err != nil {
		return Signer{}, err
	}
	if sig.DIDKey != "" {
		return verifyDIDKey(raw, sig.DIDKey, author)
	}
	blanked, ok := blank(raw, sig.Sig)
	if !ok {
		return Signer{}, fmt.Errorf("%w: sig value not found in the file", ErrBadSignature)
	}
	if !checkSchnorr(sig.PubKey, sig.Sig, blanked) {
		return Signer{}, fmt.Errorf("%w: does not verify for pubkey %s (the file changed after signing?)", ErrBadSignature, sig.PubKey)
	}
	return Signer{Form: SigFormNostr, KeyType: KeySecp256k1, PubKey: sig.PubKey, DID: secpDID(sig.PubKey)}, nil
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

// readSignature finds metadata.signature and checks its shape; author is
// metadata.author when it is a string (the signer of a bare multibase
// signature).
func readSignature(raw []byte) (sig *Signature, author string, err error) {
	root, prob := decodeDoc(raw)
	if prob != nil {
		return nil, "", &ParseError{Problems: []Problem{*prob}}
	}
	meta := mapValue(root, "metadata")
	if meta == nil {
		return nil, "", fmt.Errorf("%w: no metadata section", ErrUnsigned)
	}
	if a := mapValue(meta, "author"); a != nil && a.Kind == yaml.ScalarNode {
		author = strings.TrimSpace(a.Value)
	}
	n := mapValue(meta, "signature")
	if n == nil {
		return nil, "", ErrUnsigned
	}
	sig, err = signatureOf(n)
	return sig, author, err
}

func signatureOf(n *yaml.Node) (*Signature, error) {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!str" && strings.TrimSpace(n.Value) != "" {
		return &Signature{DIDKey: n.Value}, nil
	}
	if n.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%w: line %d: metadata.signature: must be a DID-key string or a mapping {pubkey, sig}", ErrBadSignature, n.Line)
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

// SignAs writes metadata.signature in the form asked for (SigFormats) and
// returns the signed bytes. The rest of the file is kept byte for byte: an
// existing signature entry is replaced where it stands, else the entry is
// added as the last field of metadata. secretKey is 64-hex or an nsec
// (for SigFormDIDKeyEd25519, the Ed25519 seed). metadata must be a block
// mapping.
func SignAs(raw []byte, secretKey, form string) ([]byte, error) {
	sk, err := events.ParseSecretKey(secretKey)
	if err != nil {
		return nil, fmt.Errorf("acp: sign: %w", err)
	}
	skb, _ := hex.DecodeString(sk)
	ed, err := newSigEdit(raw)
	if err != nil {
		return nil, err
	}
	var out []byte
	switch form {
	case SigFormNostr, "":
		out, err = signNostr(ed, skb)
	case SigFormDIDKey, SigFormDIDKeyEd25519:
		out, err = signDIDKey(ed, skb, form)
	default:
		return nil, fmt.Errorf("acp: sign: unknown format %q (known: %s)", form, strings.Join(SigFormats(), ", "))
	}
	if err != nil {
		return nil, err
	}
	if _, err := VerifySigner(out); err != nil {
		return nil, fmt.Errorf("acp: sign: the signed file does not verify (%v)", err)
	}
	if !sameContent(raw, out) {
		return nil, fmt.Errorf("acp: sign: adding the signature would change the package (a block scalar with kept trailing lines ends metadata?)")
	}
	return out, nil
}

func signNostr(ed *sigEdit, skb []byte) ([]byte, error) {
	priv, pub := btcec.PrivKeyFromBytes(skb)
	pubHex := hex.EncodeToString(schnorr.SerializePubKey(pub))
	h := sha256.Sum256(ed.render(pubHex, ""))
	sig, err := schnorr.Sign(priv, h[:])
	if err != nil {
		return nil, fmt.Errorf("acp: sign: %w", err)
	}
	return ed.render(pubHex, hex.EncodeToString(sig.Serialize())), nil
}

// signDIDKey writes "did:key:…#z…": the digest is taken with the
// signature part empty ("did:key:…#").
func signDIDKey(ed *sigEdit, skb []byte, form string) ([]byte, error) {
	var did string
	var sign func(digest []byte) ([]byte, error)
	if form == SigFormDIDKeyEd25519 {
		priv := ed25519.NewKeyFromSeed(skb)
		did = encodeDIDKey(multicodec.Ed25519Pub, priv.Public().(ed25519.PublicKey))
		sign = func(d []byte) ([]byte, error) { return ed25519.Sign(priv, d), nil }
	} else {
		priv, pub := btcec.PrivKeyFromBytes(skb)
		did = encodeDIDKey(multicodec.Secp256k1Pub, pub.SerializeCompressed())
		sign = func(d []byte) ([]byte, error) {
			s, err := schnorr.Sign(priv, d)
			if err != nil {
				return nil, err
			}
			return s.Serialize(), nil
		}
	}
	h := sha256.Sum256(ed.renderScalar(did + "#"))
	sig, err := sign(h[:])
	if err != nil {
		return nil, fmt.Errorf("acp: sign: %w", err)
	}
	mb, _ := multibase.Encode(multibase.Base58BTC, sig)
	return ed.renderScalar(did + "#" + mb), nil
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
