// Package lease gives each installed agent to exactly one agentnode instance
// at a time when several instances share one PostgreSQL database
// (`serve --postgres`, docs/SCALE.md#agents-across-instances).
//
// A lease is a row per agent: its holder (an instance id), its expiry (the
// database's clock, so instances' clocks do not matter) and an epoch, a
// fencing token drawn from one sequence: it grows every time the lease
// changes hands, so a holder that stalled past its expiry finds out (Renew
// and Fence fail with ErrLost) instead of acting next to the new holder.
// Writes made on an agent's behalf take the lease row's share lock in their
// own transaction (Fence): a takeover waits for them to commit, and a stale
// holder's write fails, so the new holder's replay sees every write that
// committed.
//
// A Manager's Run renews the leases it holds and takes free or expired ones,
// every Interval, and reports each change as a value on Changes: Held true
// (start the agent, after replaying its state) or false (stop it at once).
// An instance that dies stops renewing: its leases expire after TTL and
// another instance takes them at its next tick, so within TTL + Interval of
// the last renewal. Cancelling Run is the same as dying, as far as the
// database knows; ReleaseAll hands the leases back at once on a clean stop.
// A tick's queries may take until a held lease is at stake (not one fixed
// Interval), so a slow database or a busy CPU costs no lease that was not
// in danger; the local deadlines are kept on Config.Now, which tests
// replace with a clock they move (testkit.Clock).
//
//	m, err := lease.Open(ctx, url, lease.Config{TTL: 15 * time.Second})
//	if err != nil { ... }
//	defer m.Close()
//	_ = m.Add(ctx, agentPubkey) // at install: the agent is now run by someone
//	go m.Run(ctx)
//	for c := range m.Changes() {
//		if c.Held { start(c.Lease) } else { stop(c.Lease.Agent) }
//	}
package lease
