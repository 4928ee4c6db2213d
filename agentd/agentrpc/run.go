package agentrpc

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/agentnode/agentnode/agentd/consent"
	"github.com/agentnode/agentnode/agentd/requester"
	"github.com/agentnode/agentnode/agentd/tasks"
)

// awaitConsent waits for the owner's answer on a pending remote task:
// approved, it is assigned and run; denied, it fails. A deadline passing
// first is the deadline goroutine's to expire; a closing service leaves the
// task pending for the next Run to resume.
func (s *Service) awaitConsent(ctx context.Context, t tasks.Task) {
	if s.cfg.Consent == nil {
		return
	}
	wctx, cancel := s.taskContext(ctx, t)
	defer cancel()
	err := s.cfg.Consent.Wait(wctx, t.ApprovalID)
	var denied *consent.DeniedError
	switch {
	case errors.As(err, &denied):
		s.fail(ctx, t.ID, "consent denied by the owner")
		return
	case err != nil:
		return
	}
	t, err = s.cfg.Tasks.Transition(ctx, t.ID, tasks.StatusAssigned, nil)
	if err != nil {
		return // expired or failed meanwhile
	}
	s.run(ctx, t)
}

// run carries out an assigned task and records its outcome.
func (s *Service) run(ctx context.Context, t tasks.Task) {
	if !s.executes(t) { // the agent moved to another instance: its Pickup runs it
		return
	}
	ctx, cancel := s.taskContext(ctx, t)
	defer cancel()
	if err := s.checkRevoked(ctx, t.Assignee, t.Source); err != nil {
		s.fail(ctx, t.ID, "agent revoked by its owner")
		return
	}
	t, err := s.cfg.Tasks.Transition(ctx, t.ID, tasks.StatusRunning, nil)
	if err != nil {
		return // expired meanwhile
	}
	var result json.RawMessage
	if t.Remote {
		result, err = s.executeRemote(ctx, t)
	} else {
		result, err = s.executeLocal(ctx, t)
	}
	if err != nil {
		s.log.Info("agentrpc: task failed", "task", t.ID, "agent", t.Assignee, "err", err)
		s.fail(ctx, t.ID, errMessage(err))
		return
	}
	_, err = s.cfg.Tasks.Transition(context.WithoutCancel(ctx), t.ID, tasks.StatusDone, func(t *tasks.Task) { t.Result = result })
	if err != nil && !errors.Is(err, tasks.ErrBadTransition) {
		s.log.Warn("agentrpc: finish task", "task", t.ID, "err", err)
	}
}

// taskContext bounds work on t by its deadline, else by Timeout.
func (s *Service) taskContext(ctx context.Context, t tasks.Task) (context.Context, context.CancelFunc) {
	if d := t.Requirements.Constraints.Deadline; !d.IsZero() {
		return context.WithDeadline(ctx, d)
	}
	return context.WithTimeout(ctx, s.cfg.Timeout)
}

// executeLocal runs the local assignee on the task's text, in the task's
// own conversation, on behalf of the task's source (agentd/requester).
func (s *Service) executeLocal(ctx context.Context, t tasks.Task) (json.RawMessage, error) {
	answer, err := s.cfg.Messenger.Message(requester.With(ctx, t.Source), t.Assignee, "task:"+t.ID, payloadText(t.Payload))
	if err != nil {
		if ctx.Err() != nil {
			return nil, agentUnavailable("no answer before the deadline")
		}
		return nil, reason("agent failed to answer")
	}
	return json.Marshal(MessagePayload{Messages: []TextMessage{{Text: answer}}})
}

// executeRemote delegates the task to the remote assignee (agent/delegate
// over kind 25910, waiting) and takes its outcome.
func (s *Service) executeRemote(ctx context.Context, t tasks.Task) (json.RawMessage, error) {
	params, _ := json.Marshal(DelegateParams{
		Task: TaskSpec{ID: t.ID, Type: t.Type, Requirements: t.Requirements, Payload: t.Payload},
		Wait: true, Meta: Meta{CorrelationID: t.Correlation}})
	out, err := s.cfg.Caller.CallAgent(ctx, t.Source, t.Assignee, "agent/delegate", params)
	if err != nil {
		return nil, err
	}
	var res DelegateResult
	if err := json.Unmarshal(out, &res); err != nil {
		return nil, reason("agent failed: the remote answer is not an agent/delegate result")
	}
	if res.Task.Status != tasks.StatusDone {
		return nil, reason("remote task " + string(res.Task.Status) + ": " + res.Task.Error)
	}
	return res.Task.Result, nil
}

// payloadText is what the agent reads: the payload's messages[].text, or
// its text, or the payload JSON itself.
func payloadText(p json.RawMessage) string {
	var v struct {
		Text     string        `json:"text"`
		Messages []TextMessage `json:"messages"`
	}
	if json.Unmarshal(p, &v) == nil {
		if t := text(MessagePayload{Messages: v.Messages}); t != "" {
			return t
		}
		if strings.TrimSpace(v.Text) != "" {
			return v.Text
		}
	}
	var str string
	if json.Unmarshal(p, &str) == nil {
		return str
	}
	return string(p)
}

// reason is a failure whose text is safe to record in a task and show.
type reason string

func (r reason) Error() string { return string(r) }
