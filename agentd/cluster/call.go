package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agentnode/agentnode/agentd/agentrpc"
	"github.com/agentnode/agentnode/agentd/requester"
	"github.com/agentnode/agentnode/jsonrpc"
)

// forwardCall is agentrpc.Config.Forward: one /acp call naming as target
// an agent another instance runs, whatever its transport (a websocket, an
// entry of a batch: a single call over HTTP was forwarded whole before),
// is sent to the holder, and its result or error is the answer here. A
// call that was forwarded to this instance, or names no agent installed
// elsewhere, is served here (handled false).
func (s *Shared) forwardCall(ctx context.Context, method string, params json.RawMessage, target string) (json.RawMessage, bool, error) {
	if isForwarded(ctx) {
		return nil, false, nil
	}
	agent := s.elsewhere(ctx, target)
	if agent == "" {
		return nil, false, nil
	}
	l, ok := s.holder(ctx, agent)
	if !ok {
		return nil, true, s.unavailableError(agent, l)
	}
	var out json.RawMessage
	err := s.client.call(ctx, l, method, params, &out)
	if rpcErr, isRPC := errors.AsType[*jsonrpc.Error](err); isRPC {
		return nil, true, rpcErr
	}
	if err != nil {
		s.log.Warn("forwarding an /acp call to the agent's instance", "method", method, "agent", agent, "holder", l.Holder, "url", l.URL, "err", err)
		return nil, true, s.unavailableError(agent, l)
	}
	s.log.Info("acp call forwarded to the agent's instance", "method", method, "agent", agent, "holder", l.Holder)
	return out, true, nil
}

// elsewhere is the pubkey of the installed agent target names when it
// does not run here; "" for a target that is no installed agent (served
// here: remote, or not found) or runs here. An unknown target reads the
// installed agents again first (at most once per minReloadGap): it may
// have been installed elsewhere an instant ago.
func (s *Shared) elsewhere(ctx context.Context, target string) string {
	agents := s.local.Agents
	if agents == nil {
		return ""
	}
	a, err := agents.Lookup(target)
	if err != nil && s.reloads.allow(s.cfg.Now(), minReloadGap) && agents.Reload(ctx) == nil {
		a, err = agents.Lookup(target)
	}
	if err != nil || a.PubKey == "" || s.Runs(a.PubKey) {
		return ""
	}
	return a.PubKey
}

// Chat runs one chat message of an agent another instance runs there, as
// an /acp agent/message to its holder (the conversation becomes that
// message's sessionId). A safety net: /acp calls naming the agent are
// forwarded before they get here, and tasks are executed by the holder; a
// chat can still land here while the agent changes instance.
func (s *Shared) Chat(ctx context.Context, agent, conversation, text string) (string, error) {
	l, ok := s.holder(ctx, agent)
	if !ok {
		return "", fmt.Errorf("%w (agent %s, holder %q)", ErrUnavailable, agent, l.Holder)
	}
	params := agentrpc.MessageParams{Target: agent, Source: requester.From(ctx), Content: agentrpc.MessageContent{Type: "request",
		Payload: agentrpc.MessagePayload{Messages: []agentrpc.TextMessage{{Text: text}},
			Context: map[string]any{"sessionId": conversation}}}}
	var out agentrpc.MessageResult
	err := s.client.call(ctx, l, "agent/message", params, &out)
	if rpcErr, isRPC := errors.AsType[*jsonrpc.Error](err); isRPC {
		return "", rpcErr
	}
	switch {
	case errors.Is(err, jsonrpc.ErrBadResponse):
		return "", fmt.Errorf("cluster: agent %s on %s: %w", agent, l.Holder, err)
	case err != nil:
		return "", fmt.Errorf("%w (agent %s on %s: %v)", ErrUnavailable, agent, l.Holder, err)
	case len(out.Content.Payload.Messages) == 0:
		return "", fmt.Errorf("cluster: agent %s on %s: no answer", agent, l.Holder)
	}
	return out.Content.Payload.Messages[0].Text, nil
}
