package acp

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"
)

// TestCID: the CIDs IPFS gives files added with --cid-version 1
// --raw-leaves (the empty file's and "hello world\n"'s, as `ipfs add`
// prints them).
func TestCID(t *testing.T) {
	for content, want := range map[string]string{
		"":              "bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku",
		"hello world\n": "bafkreifjjcie6lypi6ny7amxnfftagclbuxndqonfipmb64f2km2devei4",
	} {
		h := sha256.Sum256([]byte(content))
		if got := CID(hex.EncodeToString(h[:])); got != want {
			t.Errorf("CID(%q) = %s, want %s", content, got, want)
		}
	}
	if CID("zz") != "" {
		t.Error("CID of a bad digest is not empty")
	}
}
