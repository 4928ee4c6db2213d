package agentrpc

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/agentnode/agentnode/agentd/consent"
	"github.com/agentnode/agentnode/agentd/directory"
	"github.com/agentnode/agentnode/agentd/tasks"
	"github.com/agentnode/agentnode/jsonrpc"
)

// DelegateParams are agent/delegate's params (spec §3.3) and taskAssign's
// arguments.
type DelegateParams struct {
	Task TaskSpec `json:"task"`
	// Source is the delegating agent; it must be local to reach a remote one.
	Source string `json:"source,omitempty"`
	// Target names the agent to delegate to; "": the best-ranked available
	// agent matching task.requirements.capabilities.
	Target string `json:"target,omitempty"`
	// Wait: answer when the task is final (or the request ends) instead of
	// once it is assigned.
	Wait bool `json:"wait,omitempty"`
	Meta Meta `json:"_meta"`
}

// TaskSpec is the task a caller delegates.
type TaskSpec struct {
	ID           string             `json:"id,omitempty"` // "": the node makes one
	Type         string             `json:"type,omitempty"`
	Requirements tasks.Requirements `json:"requirements"`
	Payload      json.RawMessage    `json:"payload,omitempty"`
}

// DelegateResult is agent/delegate's answer.
type DelegateResult struct {
	Task tasks.Task `json:"task"`
	Meta Meta       `json:"_meta"`
}

func (s *Service) agentDelegate(ctx context.Context, params json.RawMessage) (any, error) {
	var p DelegateParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	return s.delegate(ctx, p, false)
}

// delegate creates the task, chooses its agent, asks consent when the
// agent is remote, and starts it (incoming: a remote node's call for a
// local agent, p.Target fixed).
func (s *Service) delegate(ctx context.Context, p DelegateParams, incoming bool) (DelegateResult, error) {
	if err := s.normaliseDelegate(ctx, &p); err != nil {
		return DelegateResult{}, err
	}
	t, err := s.cfg.Tasks.Create(ctx, tasks.Task{ID: p.Task.ID, Type: p.Task.Type, Source: p.Source,
		Requirements: p.Task.Requirements, Payload: p.Task.Payload, Correlation: p.Meta.CorrelationID})
	if err != nil {
		return DelegateResult{}, err
	}
	assignee, remote, err := s.choose(ctx, p, incoming)
	if err != nil {
		s.fail(ctx, t.ID, "no agent: "+errMessage(err))
		return DelegateResult{}, withTask(err, t.ID)
	}
	if t, err = s.dispatch(ctx, t, p, assignee, remote); err != nil {
		return DelegateResult{}, withTask(err, t.ID)
	}
	if p.Wait {
		if final, err := s.cfg.Tasks.Wait(ctx, t.ID); err == nil || final.ID != "" {
			t = final
		}
	}
	return DelegateResult{Task: t, Meta: Meta{CorrelationID: p.Meta.CorrelationID}}, nil
}

func (s *Service) normaliseDelegate(ctx context.Context, p *DelegateParams) error {
	var err error
	if p.Source, err = optionalAgentID("source", p.Source); err != nil {
		return err
	}
	if p.Target, err = s.targetID("target", p.Target, true); err != nil {
		return err
	}
	if p.Task.Requirements.Constraints.Priority < 0 || p.Task.Requirements.Constraints.MaxTokens < 0 {
		return invalidPayload("task.requirements.constraints: priority and maxTokens must not be negative")
	}
	if p.Meta.CorrelationID == "" {
		p.Meta.CorrelationID = s.cfg.NewID()
	}
	return s.checkRevoked(ctx, p.Source, p.Target)
}

// dispatch asks consent for a remote assignee, then assigns and starts the
// task; a task waiting for consent stays pending with its approval id and
// a runner waits for the owner's answer.
func (s *Service) dispatch(ctx context.Context, t tasks.Task, p DelegateParams, assignee string, remote bool) (tasks.Task, error) {
	if remote {
		req := consent.Request{Op: consent.OpDelegateRemote, Agent: p.Source, Target: assignee, Summary: summary(t)}
		err := s.check(ctx, req, p.Meta.ApprovalID)
		var pe *consent.PendingError
		if errors.As(err, &pe) {
			t, err = s.cfg.Tasks.Edit(ctx, t.ID, func(t *tasks.Task) { t.Assignee, t.Remote, t.ApprovalID = assignee, true, pe.Approval.ID })
			if err == nil && s.executes(t) {
				s.goRun(t.ID, func(ctx context.Context) { s.awaitConsent(ctx, t) })
			}
			return t, err
		}
		if err != nil {
			s.fail(ctx, t.ID, "consent: "+errMessage(err))
			return t, err
		}
	}
	t, err := s.cfg.Tasks.Transition(ctx, t.ID, tasks.StatusAssigned, func(t *tasks.Task) { t.Assignee, t.Remote = assignee, remote })
	if err != nil {
		return t, err
	}
	if s.executes(t) { // else the instance running the agent picks it up (Pickup)
		s.goRun(t.ID, func(ctx context.Context) { s.run(ctx, t) })
	}
	return t, nil
}

func summary(t tasks.Task) string {
	s := "delegate task " + t.ID
	if t.Type != "" {
		s += " (" + t.Type + ")"
	}
	return s + " to a remote agent"
}

// choose picks the task's agent: the named target, or the best-ranked
// available match (tasks.Pick over the directory's ranking, balanced by
// this node's own load on each agent). Remote agents qualify only when the
// source is a local agent and the node has a Caller.
func (s *Service) choose(ctx context.Context, p DelegateParams, incoming bool) (string, bool, error) {
	canRemote := !incoming && s.cfg.Caller != nil && p.Source != "" && s.cfg.Local(p.Source)
	if p.Target != "" {
		return s.chooseTarget(p.Target, canRemote)
	}
	var cands []tasks.Candidate
	for _, a := range s.cfg.Directory.Search(directory.Query{Capabilities: p.Task.Requirements.Capabilities, Limit: -1}) {
		_, revoked := s.revoked(ctx, a.ID)
		local := s.cfg.Local(a.ID)
		if revoked || a.ID == p.Source || (!local && !canRemote) || a.Unverified != "" {
			continue
		}
		cands = append(cands, tasks.Candidate{ID: a.ID, Quality: a.QualityScore, Load: a.Load, Capacity: a.Capacity})
	}
	active, err := s.cfg.Tasks.Active(ctx)
	if err != nil {
		return "", false, err
	}
	best, ok := tasks.Pick(cands, active)
	if !ok {
		return "", false, agentUnavailable("no available agent matches the requirements")
	}
	return best.ID, !s.cfg.Local(best.ID), nil
}

func (s *Service) chooseTarget(target string, canRemote bool) (string, bool, error) {
	if s.cfg.Local(target) {
		return target, false, nil
	}
	a, known := s.cfg.Directory.Get(target)
	switch {
	case !known:
		return "", false, agentNotFound(target)
	case a.Unverified != "": // nothing proves who it is, and it has no key to reach
		return "", false, agentUnavailable("the target is registered unverified (" + a.Unverified + "): it cannot be delegated to")
	case !canRemote:
		return "", false, invalidPayload("source must be an agent on this node to delegate to a remote agent")
	case !a.Available:
		return "", false, agentUnavailable("the target sends no heartbeats")
	}
	return target, true, nil
}

// withTask adds the task id to a JSON-RPC error that has no data.
func withTask(err error, id string) error {
	var je *jsonrpc.Error
	if errors.As(err, &je) && je.Data == nil {
		cp := *je
		cp.Data = map[string]string{"taskId": id}
		return &cp
	}
	return err
}

// errMessage is the peer-safe text of err.
func errMessage(err error) string {
	var r reason
	if errors.As(err, &r) {
		return string(r)
	}
	var je *jsonrpc.Error
	if errors.As(err, &je) {
		return je.Message
	}
	if je = mapError(err); je != nil {
		return je.Message
	}
	return "internal error"
}

// fail moves task id to failed (nothing if it is final already).
func (s *Service) fail(ctx context.Context, id, why string) {
	_, err := s.cfg.Tasks.Transition(context.WithoutCancel(ctx), id, tasks.StatusFailed, func(t *tasks.Task) { t.Error = why })
	if err != nil && !errors.Is(err, tasks.ErrBadTransition) {
		s.log.Warn("agentrpc: fail task", "task", id, "err", err)
	}
}
