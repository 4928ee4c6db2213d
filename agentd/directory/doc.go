// Package directory is the agent directory of the Agent Context Protocol
// (ACP "agent://directory", agentSearch, agentEvaluate, agent heartbeats):
// a live, in-memory index of every agent the relay knows about, built from
// events only —
//
//   - kind 0 bot profiles (["bot"], ["e", definition], ["p", owner]) with the
//     owner link verified against the owner's kind 14199 claims
//     (events.CheckOwnership);
//   - kind 4199 definitions (their tools are capabilities);
//   - kind 30333 heartbeats (availability, status, load, capacity,
//     capabilities, and the ACP agent object in their content);
//   - kind 1985 evaluations in the "agentnode/eval" namespace, aggregated per
//     agent as a trust-weighted mean of each evaluator's latest score;
//   - agents registered over JSON-RPC with Register, whose signed
//     registration (a fresh kind 30333 heartbeat) proves they hold their key.
//
// Search ranks by a documented mix of quality score, cost and load; agents
// whose heartbeats stop (older than HeartbeatTTL) are unavailable and leave
// the ranking. Heartbeater publishes the local agents' heartbeats. The rules
// and the figures are in docs/DIRECTORY.md.
//
//	dir := directory.New(directory.Config{Source: rel}) // *relay.Relay: query, OnStored, Publish
//	go dir.Run(ctx) // loads what the relay holds, then follows it until ctx ends
//	<-dir.Ready()   // loaded
//	agents := dir.Search(directory.Query{Capabilities: []string{"code.review"}, MinScore: 7})
//	evt, err := dir.Evaluate(ctx, evaluatorSK, agents[0].ID, 9, "thorough review", "")
//
//	hb := directory.NewHeartbeater(directory.HeartbeaterConfig{
//		Agents: localAgents, Keys: agentKey, Status: agentStatus, Publish: rel.Publish})
//	go hb.Run(ctx) // beats every Interval until ctx ends
package directory
