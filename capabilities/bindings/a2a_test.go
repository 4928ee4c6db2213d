package bindings_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

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
		"hex":              {pk, `{"message":"hi"}`, `{"message":"hi"}`},
		"upper hex":        {strings.ToUpper(pk), `{"message":"hi"}`, `{"message":"hi"}`},
		"npub":             {npub, `{"message":"hi"}`, `{"message":"hi"}`},
		"did:nostr hex":    {"did:nostr:" + pk, `{"message":"hi"}`, `{"message":"hi"}`},
		"placeholder":      {"{contact_did}", `{"contact_did":"` + npub + `","message":"hi"}`, `{"message":"hi"}`},
		"placeholder did":  {"{to}", `{"to":"did:nostr:` + pk + `"}`, `{}`},
		"no args, literal": {pk, ``, `{}`},
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
		"garbage target":          {"did:nuwa:agent:alice", `{}`},
		"short hex":               {"abcd", `{}`},
		"nsec is not a target":    {"nsec1vl029mgpspedva04g90vltkh6fvh240zqtv9k0t9af8935ke9laqsnlfe5", `{}`},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := call(t, r, acp.Binding{Type: acp.BindNuwaA2A, TargetDID: tc.target, ServiceMethod: "m"}, tc.args)
			wantCode(t, err, capabilities.CodeInvalidInput)
		})
	}
}

func TestRunner_A2ANotConfigured(t *testing.T) {
	r := newRunner(t, bindings.Config{})
	pk, _ := nostr.GetPublicKey(nostr.GeneratePrivateKey())
	_, err := call(t, r, acp.Binding{Type: acp.BindNuwaA2A, TargetDID: pk, ServiceMethod: "m"}, `{}`)
	wantCode(t, err, capabilities.CodeExecutionFailed)
}
