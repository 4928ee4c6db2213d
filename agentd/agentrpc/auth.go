package agentrpc

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"

	"github.com/btcsuite/btcd/btcec/v2/schnorr"

	"github.com/agentnode/agentnode/events"
	"github.com/agentnode/agentnode/jsonrpc"
)

// authMarks checks the spec's auth object ("TBD" in the spec: a token and a
// signature of unstated form) of an agent/register without proof, where it
// can be checked, and returns what the listing says of it (docs/INTEROP.md):
//
//   - auth.token is compared (in constant time) with this node's API token,
//     the credential /acp takes as its bearer: "token verified" or "token
//     not this node's". Either is listed: the spec's own example carries a
//     placeholder token, and a claim stays unverified whatever it carries.
//   - auth.signature, when agent.id is a key (64 hex or npub), must be a
//     BIP-340 signature (128 hex) by that key of sha256(auth.token): a bad
//     one is refused (-32009: it claims a key it does not hold); a good one
//     is "signature verified". Beside a free-form id nothing names a key to
//     check it against: "signature unchecked (no key)".
//
// Passing the checks does not make the registration proven: only a signed
// kind 30333 proof does.
func (s *Service) authMarks(ag specAgent) ([]string, error) {
	if ag.Auth == nil {
		return nil, nil
	}
	var marks []string
	if tok := ag.Auth.Token; tok != "" {
		if s.cfg.Token != "" && subtle.ConstantTimeCompare([]byte(tok), []byte(s.cfg.Token)) == 1 {
			marks = append(marks, "token verified")
		} else {
			marks = append(marks, "token not this node's")
		}
	}
	if ag.Auth.Signature == "" {
		return marks, nil
	}
	key, err := events.ParsePubKey(ag.ID)
	if err != nil {
		return append(marks, "signature unchecked (no key)"), nil
	}
	if !validAuthSignature(key, ag.Auth.Token, ag.Auth.Signature) {
		return nil, &jsonrpc.Error{Code: CodeProofRejected, Message: "proof rejected: auth.signature is not a BIP-340 signature of sha256(auth.token) by agent.id"}
	}
	return append(marks, "signature verified"), nil
}

// validAuthSignature verifies sig (hex) by key (hex) over sha256(token).
func validAuthSignature(key, token, sig string) bool {
	kb, err := hex.DecodeString(key)
	if err != nil {
		return false
	}
	pk, err := schnorr.ParsePubKey(kb)
	if err != nil {
		return false
	}
	sb, err := hex.DecodeString(sig)
	if err != nil || len(sb) != schnorr.SignatureSize {
		return false
	}
	s, err := schnorr.ParseSignature(sb)
	if err != nil {
		return false
	}
	h := sha256.Sum256([]byte(token))
	return s.Verify(h[:], pk)
}
