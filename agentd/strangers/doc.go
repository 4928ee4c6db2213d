// Package strangers bounds what senders an agent does not know cost it.
//
// A stranger is whoever writes to an agent (a NIP-17 DM, a kind-25910
// call) and is not its owner, not on the owner's allowlist and not a
// verified sibling (an agent of the same owner). Answering a stranger
// costs a model call, which a paid API bills; without a bound, 200 DMs
// from 200 fresh keys cost 200 calls. A Budget admits strangers' messages
// through three token buckets, all of which must hold a token:
//
//   - per sender: DefaultPerSender, 3 messages, then one per 10 minutes;
//   - per agent (all strangers of one agent): DefaultPerAgent, 20, then one a minute;
//   - global (all strangers of all agents): DefaultGlobal, 100, then one per 10 seconds.
//
// Known senders (Config.Known) skip the budget. A message the budget
// refuses costs nothing: no model call, no reply, except one short notice
// to a sender whose own bucket ran dry (Notify, at most once per dry
// spell); an agent's or the node's bucket running dry is silence (a notice
// per fresh key would be an amplifier). Buckets are created only when a
// message is admitted, so the maps stay as small as the budget itself
// (and are capped at MaxEntries); the clock is injected (Config.Now).
//
// One Budget is shared by every transport of a node: `agentnode serve`
// gives the same one to the DM service (agentd/dm) and the kind-25910
// server (agentd/nostrrpc), so a stranger's DMs and calls draw on the same
// tokens. docs/DM.md ("Strangers") documents the defaults and the
// "strangers" section of serve's --config that changes them.
//
//	b := strangers.New(strangers.Config{Known: func(ctx context.Context, agent, from string) bool {
//		return from == ownerOf(agent)
//	}})
//	switch b.Admit(ctx, agent, from) {
//	case strangers.Known, strangers.Allow: // answer
//	case strangers.Notify: // tell the sender, once, without a model call
//	case strangers.Drop: // nothing
//	}
package strangers
