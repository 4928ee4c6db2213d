package tasks

import (
	"context"
	"time"
)

// AgentStats are one agent's task figures on this node, for its metrics.
type AgentStats struct {
	Assigned             int     `json:"tasksAssigned"` // assigned or running now
	Done                 int     `json:"tasksDone"`
	Failed               int     `json:"tasksFailed"`
	Expired              int     `json:"tasksExpired"`
	AverageExecutionTime float64 `json:"averageExecutionTime,omitempty"` // seconds, over done tasks
}

// Stats returns agent's task figures.
func (s *Store) Stats(ctx context.Context, agent string) (AgentStats, error) {
	list, err := s.List(ctx, Filter{Assignee: agent})
	if err != nil {
		return AgentStats{}, err
	}
	var st AgentStats
	var total time.Duration
	for _, t := range list {
		switch t.Status {
		case StatusAssigned, StatusRunning:
			st.Assigned++
		case StatusDone:
			st.Done++
			total += t.Duration()
		case StatusFailed:
			st.Failed++
		case StatusExpired:
			st.Expired++
		}
	}
	if st.Done > 0 {
		st.AverageExecutionTime = total.Seconds() / float64(st.Done)
	}
	return st, nil
}
