// Package tasks is the task queue of the Agent Context Protocol's
// delegation (agent/delegate, the taskAssign tool, agent://tasks): tasks
// with requirements (capabilities, deadline, priority, maxTokens), their
// statuses and transitions, persisted in a SQLite file so they survive a
// restart, and a goroutine that expires tasks whose deadline has passed.
//
// Statuses: pending → assigned → running → done, and any of the first three
// → failed or expired (see CanTransition). done, failed and expired are
// final.
//
// Pick chooses the agent a task goes to: the best-ranked available agent
// that matches, balanced by its live load (the larger of what its heartbeat
// says and what this node has in flight on it) against its capacity.
//
//	st, err := tasks.Open(ctx, tasks.Config{Path: filepath.Join(dataDir, "agents", "tasks.db")})
//	if err != nil { ... }
//	defer st.Close()
//	go st.Run(ctx) // deadline enforcement, until ctx ends
//	t, err := st.Create(ctx, tasks.Task{Type: "analysis", Requirements: req, Payload: p})
//	t, err = st.Transition(ctx, t.ID, tasks.StatusAssigned, func(t *tasks.Task) { t.Assignee = agent })
package tasks
