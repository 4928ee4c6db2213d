package agentrpc

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agentnode/agentnode/agentd/nostrrpc"
)

var _ nostrrpc.Handler = (*Service)(nil)

// ServeRPC answers the kind-25910 requests other nodes send to this node's
// agents (nostrrpc.Handler): agent/message and agent/delegate, addressed
// to agent by the verified caller from. They run the same code as over
// HTTP, with target (or assignee) fixed to agent and source to from; they
// are never forwarded again. Errors carry the same -32001 family codes.
func (s *Service) ServeRPC(ctx context.Context, agent, from, method string, params json.RawMessage) (any, error) {
	var (
		out any
		err error
	)
	switch method {
	case "agent/message":
		out, err = s.serveMessage(ctx, agent, from, params)
	case "agent/delegate":
		out, err = s.serveDelegate(ctx, agent, from, params)
	default:
		return nil, fmt.Errorf("%w: %s", nostrrpc.ErrMethodNotFound, method)
	}
	if err != nil {
		return nil, toRPCError(err)
	}
	return out, nil
}

func (s *Service) serveMessage(ctx context.Context, agent, from string, params json.RawMessage) (any, error) {
	var p MessageParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	p.Target, p.Source = agent, from
	if err := s.normaliseMessage(ctx, &p); err != nil {
		return nil, err
	}
	return s.messageLocal(ctx, p)
}

func (s *Service) serveDelegate(ctx context.Context, agent, from string, params json.RawMessage) (any, error) {
	var p DelegateParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	p.Target, p.Source, p.Wait = agent, from, true
	return s.delegate(ctx, p, true)
}
