package tasks

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// Get returns the task with id, or an error wrapping ErrNotFound.
func (s *Store) Get(ctx context.Context, id string) (Task, error) {
	return s.b.Get(ctx, id)
}

func decode(doc string) (Task, error) {
	var t Task
	if err := json.Unmarshal([]byte(doc), &t); err != nil {
		return Task{}, fmt.Errorf("tasks: decode: %w", err)
	}
	return t, nil
}

// Filter selects tasks for List; the zero value selects all.
type Filter struct {
	Status   []Status // any of these (none: any status)
	Assignee string   // hex pubkey ("": any)
	Limit    int      // 0: no cap
}

// List returns the tasks matching f, highest priority first, then oldest.
func (s *Store) List(ctx context.Context, f Filter) ([]Task, error) {
	return s.b.List(ctx, f)
}

// Active returns, per assignee, how many of its tasks are assigned or
// running: the load this node itself has put on each agent.
func (s *Store) Active(ctx context.Context) (map[string]int, error) {
	return s.b.Active(ctx)
}

// Wait blocks until task id is final (done, failed, expired) and returns
// it, or until ctx ends.
func (s *Store) Wait(ctx context.Context, id string) (Task, error) {
	for {
		s.mu.Lock()
		ch, closed := s.changed, s.closed
		s.mu.Unlock()
		if closed {
			return Task{}, ErrClosed
		}
		t, err := s.b.Get(ctx, id)
		if err != nil || t.Status.Final() {
			return t, err
		}
		select {
		case <-ch:
		case <-s.poll():
		case <-ctx.Done():
			return t, ctx.Err()
		}
	}
}

// poll fires after Config.Poll, or never when it is 0.
func (s *Store) poll() <-chan time.Time {
	if s.cfg.Poll <= 0 {
		return nil
	}
	return time.After(s.cfg.Poll)
}

// Wake makes every Wait read its task again: call it when a change may
// have been made elsewhere (another instance on a shared Backend announced
// one).
func (s *Store) Wake() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	close(s.changed)
	s.changed = make(chan struct{})
}
