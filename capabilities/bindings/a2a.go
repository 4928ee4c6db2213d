package bindings

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentnode/agentnode/capabilities"
	"github.com/agentnode/agentnode/capabilities/acp"
	"github.com/agentnode/agentnode/events"
)

// callA2A calls service_method on the target agent. A target_did of the
// form "{name}" is taken from the argument name, which is then removed
// from the params: it addresses the call, it is not its payload.
func (r *Runner) callA2A(ctx context.Context, c Call) (json.RawMessage, error) {
	if r.cfg.A2A == nil {
		return nil, capabilities.Errorf(capabilities.CodeExecutionFailed, "tool %s: agent-to-agent calls are not configured on this node", c.Tool)
	}
	if c.Binding.ServiceMethod == "" {
		return nil, capabilities.Errorf(capabilities.CodeInvalidInput, "tool %s: nuwa_a2a binding has no service_method", c.Tool)
	}
	target, params, err := a2aTarget(c)
	if err != nil {
		return nil, err
	}
	return r.cfg.A2A.CallAgent(ctx, c.Agent, target, c.Binding.ServiceMethod, params)
}

// a2aTarget resolves target_did (literal or "{arg}") to a hex pubkey and
// returns the params to send.
func a2aTarget(c Call) (target string, params json.RawMessage, err error) {
	params = c.Args
	if len(strings.TrimSpace(string(params))) == 0 {
		params = json.RawMessage("{}")
	}
	did := c.Binding.TargetDID
	if name, ok := placeholder(did); ok {
		if did, params, err = takeArg(params, name); err != nil {
			return "", nil, capabilities.Errorf(capabilities.CodeInvalidInput, "tool %s: %s", c.Tool, err)
		}
	}
	if strings.HasPrefix(strings.TrimSpace(did), "did:nuwa:") {
		return "", nil, capabilities.Errorf(capabilities.CodeNotFound,
			"tool %s: target %s: a did:nuwa identifier needs a Nuwa DID resolver, which this node does not have (did:key with a secp256k1 key, did:nostr, npub or hex reach an agent over Nostr)", c.Tool, did)
	}
	target, err = ParseAgent(did)
	if err != nil {
		return "", nil, capabilities.Errorf(capabilities.CodeInvalidInput, "tool %s: target %s", c.Tool, err)
	}
	return target, params, nil
}

// placeholder reports whether s is "{name}" and returns name.
func placeholder(s string) (string, bool) {
	if len(s) > 2 && s[0] == '{' && s[len(s)-1] == '}' && !strings.ContainsAny(s[1:len(s)-1], "{}") {
		return s[1 : len(s)-1], true
	}
	return "", false
}

// takeArg removes the string argument name from the object args.
func takeArg(args json.RawMessage, name string) (string, json.RawMessage, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(args, &obj); err != nil || obj == nil {
		return "", nil, fmt.Errorf("arguments must be a JSON object holding %q", name)
	}
	var v string
	if err := json.Unmarshal(obj[name], &v); err != nil || v == "" {
		return "", nil, fmt.Errorf("argument %q (the target agent) is missing or not a string", name)
	}
	delete(obj, name)
	rest, err := json.Marshal(obj)
	return v, rest, err
}

// ParseAgent turns an agent reference — npub, 64-hex, did:nostr:<hex or
// npub>, or a did:key of a secp256k1 key — into a lower-case hex pubkey.
func ParseAgent(s string) (string, error) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "did:key:") { // the spec's own identifiers: a secp256k1 key is a Nostr key
		return acp.NostrKeyOfDID(s)
	}
	s = strings.TrimPrefix(s, "did:nostr:")
	if strings.HasPrefix(s, "npub1") {
		pk, err := events.ParsePubKey(s)
		if err != nil {
			return "", fmt.Errorf("%q is not a valid npub", s)
		}
		return pk, nil
	}
	if b, err := hex.DecodeString(s); err != nil || len(b) != 32 {
		return "", fmt.Errorf("%q is not an npub, a 64-hex pubkey or a did:nostr", s)
	}
	return strings.ToLower(s), nil
}
