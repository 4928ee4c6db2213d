package acp

import "crypto/sha256"

// CRDTNames returns the x-crdt names Parse accepts, sorted.
func CRDTNames() []string { return append([]string(nil), crdtNames...) }

// Digest returns sha256 of the blanked file: what the signature signs.
func Digest(raw []byte, sig string) ([32]byte, bool) {
	b, ok := blank(raw, sig)
	if !ok {
		return [32]byte{}, false
	}
	return sha256.Sum256(b), true
}
