package contextvm

import (
	"fmt"
	"strings"
)

// Event kinds of ContextVM (its spec, CEP-4, CEP-6, CEP-19).
const (
	KindMessage            = 25910 // a signed JSON-RPC message (ephemeral)
	KindGiftWrap           = 1059  // CEP-4: NIP-44 encrypted 25910, stored
	KindEphemeralGiftWrap  = 21059 // CEP-19: the same, ephemeral
	KindServerAnnouncement = 11316 // CEP-6: the server's initialize result
	KindToolsList          = 11317 // CEP-6: tools/list
	KindResourcesList      = 11318 // CEP-6: resources/list
	KindResourceTemplates  = 11319 // CEP-6: resources/templates/list
	KindPromptsList        = 11320 // CEP-6: prompts/list
)

// Tags of ContextVM: single-element discovery tags a peer sends with its
// first message (and a server in its announcement).
const (
	TagSupportEncryption          = "support_encryption"
	TagSupportEncryptionEphemeral = "support_encryption_ephemeral"
)

// Encryption is an encryption policy (ContextVM's EncryptionMode).
type Encryption int

// The policies. Optional (the zero value) answers in kind: a plaintext
// request gets a plaintext reply, a gift-wrapped one a reply wrapped the
// same way. Required refuses plaintext requests; Disabled ignores gift
// wraps.
const (
	EncryptionOptional Encryption = iota
	EncryptionRequired
	EncryptionDisabled
)

// ParseEncryption reads "optional", "required" or "disabled" ("" is
// optional).
func ParseEncryption(s string) (Encryption, error) {
	switch strings.ToLower(s) {
	case "", "optional":
		return EncryptionOptional, nil
	case "required":
		return EncryptionRequired, nil
	case "disabled":
		return EncryptionDisabled, nil
	}
	return 0, fmt.Errorf("contextvm: encryption %q: want optional, required or disabled", s)
}

func (e Encryption) String() string {
	switch e {
	case EncryptionRequired:
		return "required"
	case EncryptionDisabled:
		return "disabled"
	}
	return "optional"
}

// isWrap reports whether kind is a gift wrap kind.
func isWrap(kind int) bool { return kind == KindGiftWrap || kind == KindEphemeralGiftWrap }
