package acp

import (
	"encoding/base32"
	"encoding/hex"
	"strings"
)

// CIDv1 prefix of a raw-codec, sha2-256 CID: version 1, multicodec raw
// (0x55), multihash sha2-256 (0x12) of 32 bytes (0x20).
var cidRawSHA256 = []byte{0x01, 0x55, 0x12, 0x20}

// cidBase32 is multibase base32 (RFC 4648 lower case, no padding).
var cidBase32 = base32.StdEncoding.WithPadding(base32.NoPadding)

// CID returns the IPFS CIDv1 (raw codec, sha2-256, base32 "b…") of a file
// whose sha256 is sha256Hex: the CID `ipfs add --cid-version 1
// --raw-leaves` gives a file of one block (up to 256 KiB, larger than any
// package the relay stores). It is "" when sha256Hex is not 64 hex.
func CID(sha256Hex string) string {
	d, err := hex.DecodeString(sha256Hex)
	if err != nil || len(d) != 32 {
		return ""
	}
	b := append(append([]byte{}, cidRawSHA256...), d...)
	return "b" + strings.ToLower(cidBase32.EncodeToString(b))
}
