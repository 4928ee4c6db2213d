package agentrpc

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd/directory"
	"github.com/agentnode/agentnode/agentd/tasks"
	"github.com/agentnode/agentnode/events"
)

type registerParams struct {
	Agent specAgent `json:"agent"`
	// Proof is the agent's signed kind 30333 heartbeat (status active or
	// busy, fresh, the ACP agent object as content): it proves the caller
	// holds the agent's key. It is what the directory lists and publishes.
	Proof *nostr.Event `json:"proof"`
}

// RegisterResult is agent/register's answer (the spec's Appendix B, plus
// the directory entry).
type RegisterResult struct {
	Status string `json:"status"` // "registered"
	// AgentID is the free-form id registered with a proof, when one was
	// given: it names the agent (Agent.ID, its key) as a target.
	AgentID      string          `json:"agentId,omitempty"`
	Directory    string          `json:"directory"`
	Agent        directory.Agent `json:"agent"`
	Capabilities struct {
		Agent AgentCapabilities `json:"agent"`
	} `json:"capabilities"`
}

func (s *Service) agentRegister(ctx context.Context, params json.RawMessage) (any, error) {
	var p registerParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if p.Proof == nil {
		return s.registerClaim(ctx, p.Agent)
	}
	free, err := s.proofID(p.Agent.ID, p.Proof.PubKey)
	if err != nil {
		return nil, err
	}
	if err := s.checkRevoked(ctx, p.Proof.PubKey); err != nil {
		return nil, err
	}
	a, err := s.cfg.Directory.Register(ctx, p.Proof)
	if err != nil {
		return nil, err
	}
	if free != "" {
		return s.nameProven(ctx, free, a)
	}
	return registered(a), nil
}

// proofID checks agent.id against the proof's key: a key must be it; a
// free-form id (the spec's "agent-id-1") must keep the id rule and is
// returned, to name the proven agent.
func (s *Service) proofID(raw, key string) (free string, err error) {
	if raw == "" {
		return "", nil
	}
	if id, err := events.ParsePubKey(raw); err == nil {
		if id != key {
			return "", invalidPayload("agent.id is not the key that signed the proof")
		}
		return "", nil
	}
	return raw, freeID(raw)
}

// nameProven makes free name the proven agent a: it replaces an unverified
// registration of the same id (the proof outranks it).
func (s *Service) nameProven(ctx context.Context, free string, a directory.Agent) (any, error) {
	if err := s.aliases.set(free, a.ID); err != nil {
		return nil, agentUnavailable(err.Error())
	}
	if _, claimed := s.claimOf(free); claimed {
		if err := s.cfg.Directory.UnregisterClaim(ctx, free); err != nil {
			s.log.Warn("unverified registration not replaced", "id", free, "err", err)
		}
	}
	res := registered(a)
	res.AgentID = free
	return res, nil
}

func registered(a directory.Agent) RegisterResult {
	res := RegisterResult{Status: "registered", Directory: "agent://directory", Agent: a}
	res.Capabilities.Agent = AgentCapabilities{Discovery: true, Evaluation: true, Coordination: true, Monitoring: true, Protocols: Protocols}
	return res
}

// registerClaim lists a registration in the spec's own form (its auth
// object, a free-form id, no proof) as unverified. An id that is a revoked
// agent's key is refused as for a proven one.
func (s *Service) registerClaim(ctx context.Context, ag specAgent) (any, error) {
	if ag.ID == "" {
		return nil, invalidPayload("agent.id is required (and a proof, the agent's signed kind 30333, to be listed as verified)")
	}
	if id, err := events.ParsePubKey(ag.ID); err == nil {
		if err := s.checkRevoked(ctx, id); err != nil {
			return nil, err
		}
	}
	if _, proven := s.aliases.get(ag.ID); proven {
		return nil, invalidPayload("agent.id %q names an agent registered with proof: register with its proof", ag.ID)
	}
	marks, err := s.authMarks(ag)
	if err != nil {
		return nil, err
	}
	c := ag.claim()
	c.Auth = marks
	a, err := s.cfg.Directory.RegisterClaim(ctx, c)
	if err != nil {
		return nil, err
	}
	return registered(a), nil
}

type unregisterParams struct {
	AgentID string       `json:"agentId"`
	Proof   *nostr.Event `json:"proof"` // the agent's signed kind 30333 with status "offline"
}

func (s *Service) agentUnregister(ctx context.Context, params json.RawMessage) (any, error) {
	var p unregisterParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if _, claimed := s.claimOf(p.AgentID); claimed && p.Proof == nil {
		if err := s.cfg.Directory.UnregisterClaim(ctx, p.AgentID); err != nil {
			return nil, err
		}
		return map[string]string{"status": "unregistered", "agentId": p.AgentID}, nil
	}
	id, err := s.proven("agentId", p.AgentID)
	if err != nil {
		return nil, err
	}
	if p.Proof == nil {
		return nil, invalidPayload(`proof (the agent's signed kind 30333, status "offline") is required`)
	}
	if err := s.checkRevoked(ctx, id); err != nil {
		return nil, err
	}
	if err := s.cfg.Directory.Unregister(ctx, id, p.Proof); err != nil {
		return nil, err
	}
	s.aliases.drop(id)
	return map[string]string{"status": "unregistered", "agentId": id}, nil
}

type heartbeatParams struct {
	AgentID string       `json:"agentId"`
	Status  string       `json:"status"`
	Proof   *nostr.Event `json:"proof"` // the signed kind 30333 this heartbeat is
	Auth    *specAuth    `json:"auth"`  // the spec's auth object: read (a heartbeat carries no check of it)
}

// agentHeartbeat records a heartbeat. Sent as a notification (the spec's
// way) it is never answered, and a heartbeat without a proof is only
// logged: availability comes from signed kind 30333 events. Sent as a
// request it is answered {"status": "ok"} or with the error.
func (s *Service) agentHeartbeat(ctx context.Context, params json.RawMessage) (any, error) {
	var p heartbeatParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if p.Proof == nil {
		if _, claimed := s.claimOf(p.AgentID); claimed {
			return s.heartbeatClaim(ctx, p)
		}
	}
	id, err := s.proven("agentId", p.AgentID)
	if err != nil {
		return nil, err
	}
	if err := s.checkRevoked(ctx, id); err != nil {
		return nil, err
	}
	if p.Proof == nil {
		s.log.Debug("agent/heartbeat without proof ignored", "agent", id, "status", p.Status)
		return map[string]string{"status": "ignored"}, nil
	}
	if p.Proof.PubKey != id {
		return nil, invalidPayload("agentId is not the key that signed the proof")
	}
	if p.Status == events.StatusOffline {
		err = s.cfg.Directory.Unregister(ctx, id, p.Proof)
	} else {
		_, err = s.cfg.Directory.Register(ctx, p.Proof)
	}
	if err != nil {
		return nil, err
	}
	return map[string]string{"status": "ok"}, nil
}

type errorParams struct {
	Error struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Details json.RawMessage `json:"details"`
	} `json:"error"`
	Meta Meta `json:"_meta"`
}

// agentError receives an agent's error report (normally a notification).
// When _meta.correlationId names an unfinished task, the task fails with
// the reported message; the report is logged either way.
func (s *Service) agentError(ctx context.Context, params json.RawMessage) (any, error) {
	var p errorParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if p.Error.Message == "" {
		return nil, invalidPayload("error.message is required")
	}
	s.log.Info("agent/error", "code", p.Error.Code, "message", p.Error.Message, "correlationId", p.Meta.CorrelationID)
	res := map[string]any{"status": "received"}
	if p.Meta.CorrelationID == "" {
		return res, nil
	}
	t, err := s.cfg.Tasks.Transition(ctx, p.Meta.CorrelationID, tasks.StatusFailed, func(t *tasks.Task) {
		t.Error = "agent/error: " + p.Error.Message
	})
	if err == nil {
		res["taskId"], res["taskStatus"] = t.ID, t.Status
	}
	return res, nil
}

// heartbeatClaim records a heartbeat of an unverified registration.
func (s *Service) heartbeatClaim(ctx context.Context, p heartbeatParams) (any, error) {
	status := p.Status
	if status == "" {
		status = events.StatusActive
	}
	a, err := s.cfg.Directory.HeartbeatClaim(ctx, p.AgentID, status)
	if err != nil {
		return nil, err
	}
	return map[string]any{"status": "ok", "agentId": a.ID, "unverified": a.Unverified}, nil
}

// claimOf returns the unverified registration id names, if any.
func (s *Service) claimOf(id string) (directory.Agent, bool) {
	if id == "" {
		return directory.Agent{}, false
	}
	a, ok := s.cfg.Directory.Get(id)
	return a, ok && a.Unverified != ""
}

// specAgent is the agent object of the spec's agent/register (section
// 3.1): the fields the directory reads; the rest (meta, evaluation,
// dependencies, anything else) is accepted and not read.
type specAgent struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	Capabilities struct {
		Tools           []string `json:"tools"`
		Models          []string `json:"models"`
		Specializations []string `json:"specializations"`
	} `json:"capabilities"`
	CostMetrics struct {
		CostPerToken float64 `json:"costPerToken"`
	} `json:"costMetrics"`
	Auth *specAuth `json:"auth"`
}

// specAuth is the spec's auth object ("TBD": a token and a signature of
// unstated form), checked as far as it can be (authMarks).
type specAuth struct {
	Token     string `json:"token"`
	Signature string `json:"signature"`
}

func (a specAgent) claim() directory.Claim {
	return directory.Claim{ID: a.ID, Name: a.Name, Tools: a.Capabilities.Tools, Models: a.Capabilities.Models,
		Specializations: a.Capabilities.Specializations, CostPerToken: a.CostMetrics.CostPerToken}
}

// targetID reads a target: an agent id (64 hex or npub), a free-form id a
// proven agent registered (its key), or a free-form id that names an
// unverified registration, which is refused with the reason (nothing proves
// who it is, and it has no key to reach it by). A well-formed id nobody
// registered is -32002 agent not found; one that breaks the id rule -32001.
func (s *Service) targetID(field, raw string, optional bool) (string, error) {
	if raw == "" && optional {
		return "", nil
	}
	if a, claimed := s.claimOf(raw); claimed {
		return "", agentUnavailable(fmt.Sprintf("%s %q is registered unverified (%s): it cannot be sent work", field, a.ID, a.Unverified))
	}
	return s.proven(field, raw)
}
