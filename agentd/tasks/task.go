package tasks

import (
	"encoding/json"
	"time"
)

// Status is where a task is in its life.
type Status string

// The statuses of a task.
const (
	StatusPending  Status = "pending"  // created, waiting for an agent (or the owner's consent)
	StatusAssigned Status = "assigned" // an agent is chosen
	StatusRunning  Status = "running"  // the agent is working on it
	StatusDone     Status = "done"     // finished with a result (final)
	StatusFailed   Status = "failed"   // finished with an error (final)
	StatusExpired  Status = "expired"  // its deadline passed first (final)
)

// transitions lists the statuses each status may move to.
var transitions = map[Status][]Status{
	StatusPending:  {StatusAssigned, StatusFailed, StatusExpired},
	StatusAssigned: {StatusRunning, StatusDone, StatusFailed, StatusExpired},
	StatusRunning:  {StatusDone, StatusFailed, StatusExpired},
}

// CanTransition reports whether a task may move from one status to another.
func CanTransition(from, to Status) bool {
	for _, s := range transitions[from] {
		if s == to {
			return true
		}
	}
	return false
}

// Final reports whether s is a final status (done, failed, expired).
func (s Status) Final() bool { return s == StatusDone || s == StatusFailed || s == StatusExpired }

// Valid reports whether s is one of the six statuses.
func (s Status) Valid() bool { return s.Final() || transitions[s] != nil }

// Task is one delegated task, as agent/delegate, taskAssign and
// agent://tasks show it (docs/AGENT-CONTEXT-PROTOCOL.md#tasks).
type Task struct {
	ID           string          `json:"id"`
	Type         string          `json:"type,omitempty"`
	Source       string          `json:"source,omitempty"`   // the delegating agent (hex), if any
	Assignee     string          `json:"assignee,omitempty"` // the agent it went to (hex)
	Remote       bool            `json:"remote,omitempty"`   // the assignee is on another node
	Requirements Requirements    `json:"requirements"`
	Payload      json.RawMessage `json:"payload,omitempty"`
	Status       Status          `json:"status"`
	Result       json.RawMessage `json:"result,omitempty"`
	Error        string          `json:"error,omitempty"`
	ApprovalID   string          `json:"approvalId,omitempty"` // the owner's consent it waits for
	Correlation  string          `json:"correlationId,omitempty"`
	Created      time.Time       `json:"created"`
	Updated      time.Time       `json:"updated"`
	Started      time.Time       `json:"started,omitzero"`
	Finished     time.Time       `json:"finished,omitzero"`
}

// Requirements say which agent may take a task and within what bounds.
type Requirements struct {
	Capabilities []string    `json:"capabilities,omitempty"` // all required
	Constraints  Constraints `json:"constraints,omitzero"`
}

// Constraints bound a task.
type Constraints struct {
	Deadline  time.Time `json:"deadline,omitzero"`  // expired when passed unfinished
	Priority  int       `json:"priority,omitempty"` // higher first in listings
	MaxTokens int       `json:"maxTokens,omitempty"`
}

// Overdue reports whether the task's deadline has passed at now.
func (t Task) Overdue(now time.Time) bool {
	d := t.Requirements.Constraints.Deadline
	return !d.IsZero() && !now.Before(d)
}

// Duration is how long the task ran (0 unless it started and finished).
func (t Task) Duration() time.Duration {
	if t.Started.IsZero() || t.Finished.IsZero() {
		return 0
	}
	return t.Finished.Sub(t.Started)
}
