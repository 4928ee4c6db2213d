package tasks

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Create stores a new pending task. An empty ID gets a fresh one; Status,
// Created and Updated are set here. A deadline already passed is
// ErrDeadlinePassed.
func (s *Store) Create(ctx context.Context, t Task) (Task, error) {
	now := s.cfg.Now().UTC()
	if t.Overdue(now) {
		return Task{}, fmt.Errorf("tasks: create: %w (deadline %s)", ErrDeadlinePassed, t.Requirements.Constraints.Deadline.Format("2006-01-02T15:04:05Z07:00"))
	}
	if t.ID == "" {
		t.ID = s.cfg.NewID()
	}
	t.Status, t.Created, t.Updated = StatusPending, now, now
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return Task{}, ErrClosed
	}
	if err := s.b.Insert(ctx, t); err != nil {
		return Task{}, err
	}
	s.notify(t)
	return t, nil
}

// Transition moves task id to status to, after applying edit (which may set
// the assignee, result, error...; nil for none), in one transaction. Moving
// to a status CanTransition does not allow is a *TransitionError wrapping
// ErrBadTransition; moving an overdue task anywhere but expired or failed
// wraps ErrDeadlinePassed. Started and Finished are stamped here.
func (s *Store) Transition(ctx context.Context, id string, to Status, edit func(*Task)) (Task, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return Task{}, ErrClosed
	}
	now := s.cfg.Now().UTC()
	t, err := s.b.Update(ctx, id, func(t *Task) error {
		if err := checkTransition(*t, to, now); err != nil {
			return err
		}
		if edit != nil {
			edit(t)
		}
		stamp(t, to, now)
		return nil
	})
	if err != nil {
		return Task{}, err
	}
	s.notify(t)
	return t, nil
}

func checkTransition(t Task, to Status, now time.Time) error {
	if !CanTransition(t.Status, to) {
		return &TransitionError{ID: t.ID, From: t.Status, To: to, Err: ErrBadTransition}
	}
	if to != StatusExpired && to != StatusFailed && t.Overdue(now) {
		return &TransitionError{ID: t.ID, From: t.Status, To: to, Err: ErrDeadlinePassed}
	}
	return nil
}

func stamp(t *Task, to Status, now time.Time) {
	t.Status, t.Updated = to, now
	if to == StatusRunning && t.Started.IsZero() {
		t.Started = now
	}
	if to.Final() {
		if t.Started.IsZero() && to == StatusDone {
			t.Started = now
		}
		t.Finished = now
	}
}

// ExpireDue moves every unfinished task whose deadline has passed to
// expired and returns how many it moved. The deadline goroutine calls it.
func (s *Store) ExpireDue(ctx context.Context) (int, error) {
	now := s.cfg.Now().UTC()
	ids, err := s.b.Overdue(ctx, now)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, id := range ids {
		_, err := s.Transition(ctx, id, StatusExpired, func(t *Task) { t.Error = "deadline passed" })
		if err == nil {
			n++
		} else if !errors.Is(err, ErrBadTransition) { // a task finishing meanwhile is fine
			return n, err
		}
	}
	return n, nil
}

// notify wakes the waiters and calls OnChange. Call with s.mu held.
func (s *Store) notify(t Task) {
	close(s.changed)
	s.changed = make(chan struct{})
	if s.cfg.OnChange != nil {
		s.cfg.OnChange(t)
	}
}

func deadlineMS(t Task) int64 {
	if d := t.Requirements.Constraints.Deadline; !d.IsZero() {
		return d.UnixMilli()
	}
	return 0
}

// Edit applies edit to an unfinished task without changing its status
// (recording the chosen agent or the approval it waits for). The status,
// id and timestamps edit sets are ignored.
func (s *Store) Edit(ctx context.Context, id string, edit func(*Task)) (Task, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return Task{}, ErrClosed
	}
	now := s.cfg.Now().UTC()
	t, err := s.b.Update(ctx, id, func(t *Task) error {
		if t.Status.Final() {
			return &TransitionError{ID: id, From: t.Status, To: t.Status, Err: ErrBadTransition}
		}
		keep := *t
		edit(t)
		t.ID, t.Status, t.Created, t.Started, t.Finished = keep.ID, keep.Status, keep.Created, keep.Started, keep.Finished
		t.Updated = now
		return nil
	})
	if err != nil {
		return Task{}, err
	}
	s.notify(t)
	return t, nil
}
