package agentrpc

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/agentnode/agentnode/agentd/consent"
	"github.com/agentnode/agentnode/agentd/requester"
	"github.com/agentnode/agentnode/jsonrpc"
)

// MessageParams are agent/message's params (spec §3.2).
type MessageParams struct {
	Source  string         `json:"source"`
	Target  string         `json:"target"`
	Content MessageContent `json:"content"`
	Meta    Meta           `json:"_meta"`
}

// MessageContent is the spec's content object.
type MessageContent struct {
	Type    string         `json:"type"` // request (in), response (out)
	Payload MessagePayload `json:"payload"`
}

// MessagePayload carries the text messages and the conversation.
type MessagePayload struct {
	Messages []TextMessage  `json:"messages"`
	Context  map[string]any `json:"context,omitempty"` // sessionId names the conversation
}

// TextMessage is one message of a payload.
type TextMessage struct {
	Text string `json:"text"`
}

// MessageResult is agent/message's answer: the target's reply, addressed
// back, with the caller's correlation id.
type MessageResult MessageParams

func (s *Service) agentMessage(ctx context.Context, params json.RawMessage) (any, error) {
	var p MessageParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if err := s.normaliseMessage(ctx, &p); err != nil {
		return nil, err
	}
	if s.cfg.Local(p.Target) {
		return s.messageLocal(ctx, p)
	}
	return s.messageRemote(ctx, p)
}

// normaliseMessage checks the ids and the text and fills the correlation id.
func (s *Service) normaliseMessage(ctx context.Context, p *MessageParams) error {
	var err error
	if p.Target, err = s.targetID("target", p.Target, false); err != nil {
		return err
	}
	if p.Source, err = optionalAgentID("source", p.Source); err != nil {
		return err
	}
	if text(p.Content.Payload) == "" {
		return invalidPayload("content.payload.messages[].text is required")
	}
	if p.Meta.CorrelationID == "" {
		p.Meta.CorrelationID = s.cfg.NewID()
	}
	return s.checkRevoked(ctx, p.Target, p.Source)
}

func text(p MessagePayload) string {
	var parts []string
	for _, m := range p.Messages {
		if t := strings.TrimSpace(m.Text); t != "" {
			parts = append(parts, t)
		}
	}
	return strings.Join(parts, "\n\n")
}

// conversation is the Messenger's conversation key: the payload's
// context.sessionId, else one conversation per source. A session belongs
// to its source: another source naming the same sessionId gets a
// conversation of its own, not the first one's history.
func conversation(p MessageParams) string {
	sid, _ := p.Content.Payload.Context["sessionId"].(string)
	switch {
	case sid == "":
		return "acp:" + p.Source
	case p.Source == "":
		return "acp:" + sid
	}
	return "acp:" + p.Source + ":" + sid
}

// messageLocal runs the local target on the message, on behalf of its
// source: the target's state is the source's to reach only as far as the
// target's owner opened it (agentd/requester).
func (s *Service) messageLocal(ctx context.Context, p MessageParams) (any, error) {
	ctx, cancel := context.WithTimeout(requester.With(ctx, p.Source), s.cfg.Timeout)
	defer cancel()
	answer, err := s.cfg.Messenger.Message(ctx, p.Target, conversation(p), text(p.Content.Payload))
	if err != nil {
		s.log.Warn("agent/message: local agent failed", "agent", p.Target, "err", err)
		if ctx.Err() != nil {
			return nil, agentUnavailable("no answer in time")
		}
		return nil, jsonrpc.Errorf(CodeAgentFailed, "agent failed to answer")
	}
	return reply(p, answer), nil
}

func reply(p MessageParams, answer string) MessageResult {
	return MessageResult{
		Source: p.Target, Target: p.Source,
		Content: MessageContent{Type: "response", Payload: MessagePayload{
			Messages: []TextMessage{{Text: answer}}, Context: p.Content.Payload.Context}},
		Meta: Meta{CorrelationID: p.Meta.CorrelationID},
	}
}

// messageRemote sends the message over kind 25910 as the local source
// agent, after the owner's consent when the policy asks for it.
func (s *Service) messageRemote(ctx context.Context, p MessageParams) (any, error) {
	if s.cfg.Caller == nil {
		return nil, agentNotFound(p.Target)
	}
	if p.Source == "" || !s.cfg.Local(p.Source) {
		return nil, invalidPayload("source must be an agent on this node to message a remote agent")
	}
	// Only an agent the directory knows can be reached: -32002 at once for
	// one it does not, -32003 at once for one that sends no heartbeats.
	if _, _, err := s.chooseTarget(p.Target, true); err != nil {
		return nil, err
	}
	req := consent.Request{Op: consent.OpMessageRemote, Agent: p.Source, Target: p.Target, Summary: "message to remote agent " + p.Target}
	if err := s.check(ctx, req, p.Meta.ApprovalID); err != nil {
		return nil, err
	}
	fwd := p
	fwd.Meta = Meta{CorrelationID: p.Meta.CorrelationID}
	raw, _ := json.Marshal(fwd)
	ctx, cancel := context.WithTimeout(ctx, s.cfg.RemoteTimeout)
	defer cancel()
	out, err := s.cfg.Caller.CallAgent(ctx, p.Source, p.Target, "agent/message", raw)
	if err != nil {
		if ctx.Err() != nil {
			return nil, agentUnavailable("no answer from the remote agent within " + s.cfg.RemoteTimeout.String())
		}
		return nil, err
	}
	var res MessageResult
	if err := json.Unmarshal(out, &res); err != nil {
		return nil, jsonrpc.Errorf(CodeAgentFailed, "agent failed: the remote answer is not an agent/message result")
	}
	if res.Meta.CorrelationID != p.Meta.CorrelationID {
		s.log.Warn("agent/message: the remote answer lost the correlation id", "target", p.Target)
		res.Meta.CorrelationID = p.Meta.CorrelationID
	}
	return res, nil
}
