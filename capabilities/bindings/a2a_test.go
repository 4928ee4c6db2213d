package bindings_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	"github.com/multiformats/go-multibase"
	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip19"

	"github.com/agentnode/agentnode/capabilities"
	"github.com/agentnode/agentnode/capabilities/acp"
	"github.com/agentnode/agentnode/capabilities/bindings"
)

// recorder is an A2ACaller that records its calls and answers {"ok":true}.
type recorder struct {
	from, target, method string
	params               json.RawMessage
}

func (r *recorder) CallAgent(_ context.Context, from, target, method string, params json.RawMessage) (json.RawMessage, error) {
	r.from, r.target, r.method, r.params = from, target, method, params
	return json.RawMessage(`{"ok":true}`), nil
}

func TestRunner_A2ATargets(t *testing.T) {
	pk, _ := nostr.GetPublicKey(nostr.GeneratePrivateKey())
	npub, _ := nip19.EncodePublicKey(pk)
	for name, tc := range map[string]struct {
		target, args, wantParams string
	}{
		"hex":               {pk, `{"message":"hi"}`, `{"message":"hi"}`},
		"upper hex":         {strings.ToUpper(pk), `{"message":"hi"}`, `{"message":"hi"}`},
		"npub":              {npub, `{"message":"hi"}`, `{"message":"hi"}`},
		"did:nostr hex":     {"did:nostr:" + pk, `{"message":"hi"}`, `{"message":"hi"}`},
		"placeholder":       {"{contact_did}", `{"contact_did":"` + npub + `","message":"hi"}`, `{"message":"hi"}`},
		"placeholder did":   {"{to}", `{"to":"did:nostr:` + pk + `"}`, `{}`},
		"no args, literal":  {pk, ``, `{}`},
		"did:key secp256k1": {secpDIDKey(t, pk), `{}`, `{}`},
	} {
		t.Run(name, func(t *testing.T) {
			rec := &recorder{}
			r := newRunner(t, bindings.Config{A2A: rec})
			b := acp.Binding{Type: acp.BindNuwaA2A, TargetDID: tc.target, ServiceMethod: "receiveSimpleMessage"}
			out, err := call(t, r, b, tc.args)
			if err != nil {
				t.Fatal(err)
			}
			mustJSON(t, out, `{"ok":true}`)
			if rec.target != pk || rec.method != "receiveSimpleMessage" || rec.from != "aa" {
				t.Errorf("call = from %s to %s method %s, want from aa to %s receiveSimpleMessage", rec.from, rec.target, rec.method, pk)
			}
			mustJSON(t, rec.params, tc.wantParams)
		})
	}
}

func TestRunner_A2ABadTargets(t *testing.T) {
	r := newRunner(t, bindings.Config{A2A: &recorder{}})
	for name, tc := range map[string]struct{ target, args string }{
		"missing placeholder arg": {"{contact_did}", `{"message":"hi"}`},
		"placeholder not string":  {"{contact_did}", `{"contact_did":42}`},
		"garbage target":          {"did:web:example.com", `{}`},
		"ed25519 did:key":         {"did:key:z6MkiTBz1ymuepAQ4HEHYSF1H8quG5GLVVQR3djdX3mDooWp", `{}`},
		"short hex":               {"abcd", `{}`},
		"nsec is not a target":    {"nsec1vl029mgpspedva04g90vltkh6fvh240zqtv9k0t9af8935ke9laqsnlfe5", `{}`},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := call(t, r, acp.Binding{Type: acp.BindNuwaA2A, TargetDID: tc.target, ServiceMethod: "m"}, tc.args)
			wantCode(t, err, capabilities.CodeInvalidInput)
		})
	}
}

// A did:nuwa target is the spec's own form, but it takes a Nuwa DID
// resolver to reach: the call answers NOT_FOUND saying so.
func TestRunner_A2ADidNuwaTarget(t *testing.T) {
	r := newRunner(t, bindings.Config{A2A: &recorder{}})
	_, err := call(t, r, acp.Binding{Type: acp.BindNuwaA2A, TargetDID: "did:nuwa:agent:alice", ServiceMethod: "m"}, `{}`)
	wantCode(t, err, capabilities.CodeNotFound)
	if !strings.Contains(err.Error(), "Nuwa DID resolver") {
		t.Errorf("error %v does not say why", err)
	}
}

// secpDIDKey is pk (x-only hex) as a did:key of its compressed
// secp256k1 key (even y, as BIP-340 keys are).
func secpDIDKey(t *testing.T, pk string) string {
	t.Helper()
	x, err := hex.DecodeString(pk)
	if err != nil {
		t.Fatal(err)
	}
	mb, err := multibase.Encode(multibase.Base58BTC, append([]byte{0xe7, 0x01, 0x02}, x...))
	if err != nil {
		t.Fatal(err)
	}
	return "did:key:" + mb
}

func TestRunner_A2ANotConfigured(t *testing.T) {
	r := newRunner(t, bindings.Config{})
	pk, _ := nostr.GetPublicKey(nostr.GeneratePrivateKey())
	_, err := call(t, r, acp.Binding{Type: acp.BindNuwaA2A, TargetDID: pk, ServiceMethod: "m"}, `{}`)
	wantCode(t, err, capabilities.CodeExecutionFailed)
}
