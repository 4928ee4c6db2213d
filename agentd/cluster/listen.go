package cluster

import (
	"context"
	"slices"
	"sync"

	"github.com/agentnode/agentnode/agentd/agentpg"
	"github.com/agentnode/agentnode/internal/lifecycle"
)

// Parts are the change dispatcher, the lease ticks and the handover that
// starts and stops agents. They stop before the DMs; Close then hands
// the leases back.
func (s *Shared) Parts() []lifecycle.Part {
	return []lifecycle.Part{
		lifecycle.Func("agent data changes", s.listen),
		lifecycle.Func("agent leases", s.leases.Run),
		lifecycle.Func("agent handover", s.h.Run),
	}
}

// listen reads the database's change notifications until ctx ends and
// brings this instance's copies up to date; Listen only queues the topics
// (its callback must be short), this goroutine does the I/O.
func (s *Shared) listen(ctx context.Context) error {
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() { _ = s.db.Listen(ctx, s.topics.add) })
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-s.topics.ready:
		}
		for _, topic := range s.topics.take() {
			if err := s.reloadTopic(ctx, topic); err != nil && ctx.Err() == nil {
				s.log.Warn("reloading after a change elsewhere", "topic", topic, "err", err)
			}
		}
	}
}

// reloadTopic applies one agentpg topic to this instance's copies.
func (s *Shared) reloadTopic(ctx context.Context, topic string) error {
	r := s.local.Reload
	var fn func(context.Context) error
	switch topic {
	case agentpg.TopicAgents:
		if s.local.Agents == nil {
			return nil
		}
		if err := s.local.Agents.Reload(ctx); err != nil {
			return err
		}
		s.signal() // installed, removed or upgraded elsewhere: beat, announce
	case agentpg.TopicRevoked:
		fn = r.Revoked
	case agentpg.TopicTasks:
		fn = r.Tasks
	case agentpg.TopicConsent:
		fn = r.Consent
	case agentpg.TopicRegistrations:
		fn = r.Registrations
	}
	if fn == nil {
		return nil
	}
	return fn(ctx)
}

// topicQueue collects distinct topics; ready has a value while some wait.
type topicQueue struct {
	mu      sync.Mutex
	pending []string
	ready   chan struct{}
}

func (q *topicQueue) init() { q.ready = make(chan struct{}, 1) }

// add queues topic (TopicAll: every topic); it never blocks.
func (q *topicQueue) add(topic string) {
	topics := []string{topic}
	if topic == agentpg.TopicAll {
		topics = []string{agentpg.TopicAgents, agentpg.TopicRevoked, agentpg.TopicTasks, agentpg.TopicConsent, agentpg.TopicRegistrations}
	}
	q.mu.Lock()
	for _, t := range topics {
		if !slices.Contains(q.pending, t) {
			q.pending = append(q.pending, t)
		}
	}
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// take returns the queued topics and empties the queue.
func (q *topicQueue) take() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := q.pending
	q.pending = nil
	return out
}
