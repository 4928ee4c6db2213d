package consent

import (
	"context"
	"fmt"
	"time"
)

// Status is an approval's state.
type Status string

// Approval statuses.
const (
	StatusPending  Status = "pending"
	StatusApproved Status = "approved"
	StatusDenied   Status = "denied"
)

// Request describes a privileged operation: what, by which agent, toward
// which agent or resource, in words the owner reads.
type Request struct {
	Op      string `json:"op"`
	Agent   string `json:"agent,omitempty"`  // the acting agent (hex)
	Target  string `json:"target,omitempty"` // the agent or resource acted on
	Summary string `json:"summary,omitempty"`
}

// Approval is the owner's decision on one Request.
type Approval struct {
	ID string `json:"id"`
	Request
	Status  Status    `json:"status"`
	Reason  string    `json:"reason,omitempty"` // the owner's, on deny
	Created time.Time `json:"created"`
	Decided time.Time `json:"decided,omitzero"`
}

// Check lets the operation through when the policy does not require
// consent for req.Op, or when approvalID names an approved approval of
// the same operation, agent and target. Otherwise it returns a
// *PendingError (a new pending approval is recorded when approvalID is ""),
// a *DeniedError, or an error wrapping ErrMismatch or ErrNotFound.
func (c *Consent) Check(ctx context.Context, req Request, approvalID string) error {
	if !c.Required(req.Op) {
		return nil
	}
	if approvalID == "" {
		a, err := c.Ask(ctx, req)
		if err != nil {
			return err
		}
		return &PendingError{Approval: a}
	}
	a, err := c.Get(ctx, approvalID)
	if err != nil {
		return err
	}
	if a.Op != req.Op || a.Agent != req.Agent || a.Target != req.Target {
		return fmt.Errorf("%w: %s is for %s by %s on %s", ErrMismatch, a.ID, a.Op, a.Agent, a.Target)
	}
	return decision(a)
}

// decision turns a's status into Check's answer.
func decision(a Approval) error {
	switch a.Status {
	case StatusApproved:
		return nil
	case StatusDenied:
		return &DeniedError{Approval: a}
	}
	return &PendingError{Approval: a}
}

// Ask records a pending approval for req and returns it.
func (c *Consent) Ask(ctx context.Context, req Request) (Approval, error) {
	a := Approval{ID: c.cfg.NewID(), Request: req, Status: StatusPending, Created: c.cfg.Now().UTC()}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return Approval{}, ErrClosed
	}
	if err := c.b.Insert(ctx, a); err != nil {
		return Approval{}, err
	}
	c.notify()
	return a, nil
}

// Get returns approval id, or an error wrapping ErrNotFound.
func (c *Consent) Get(ctx context.Context, id string) (Approval, error) {
	return c.b.Get(ctx, id)
}

// List returns the approvals with status (""= all), oldest first.
func (c *Consent) List(ctx context.Context, status Status) ([]Approval, error) {
	return c.b.List(ctx, status)
}

// Approve approves pending approval id.
func (c *Consent) Approve(ctx context.Context, id string) (Approval, error) {
	return c.decide(ctx, id, StatusApproved, "")
}

// Deny denies pending approval id, with the owner's reason (may be "").
func (c *Consent) Deny(ctx context.Context, id, reason string) (Approval, error) {
	return c.decide(ctx, id, StatusDenied, reason)
}

func (c *Consent) decide(ctx context.Context, id string, to Status, reason string) (Approval, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return Approval{}, ErrClosed
	}
	now := c.cfg.Now().UTC()
	a, err := c.b.Update(ctx, id, func(a *Approval) error {
		if a.Status != StatusPending {
			return fmt.Errorf("%w: %s is %s", ErrDecided, id, a.Status)
		}
		a.Status, a.Reason, a.Decided = to, reason, now
		return nil
	})
	if err != nil {
		return a, err
	}
	c.notify()
	return a, nil
}

// Wait blocks until approval id is decided, and returns Check's answer for
// it: nil (approved), a *DeniedError, or ctx's error.
func (c *Consent) Wait(ctx context.Context, id string) error {
	for {
		c.mu.Lock()
		ch, closed := c.changed, c.closed
		c.mu.Unlock()
		if closed {
			return ErrClosed
		}
		a, err := c.Get(ctx, id)
		if err != nil {
			return err
		}
		if a.Status != StatusPending {
			return decision(a)
		}
		select {
		case <-ch:
		case <-c.poll():
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// poll fires after Config.Poll, or never when it is 0.
func (c *Consent) poll() <-chan time.Time {
	if c.cfg.Poll <= 0 {
		return nil
	}
	return time.After(c.cfg.Poll)
}

// Wake makes every Wait read its approval again: call it when a decision
// may have been made elsewhere (another instance on a shared Backend
// announced one).
func (c *Consent) Wake() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.closed {
		c.notify()
	}
}
