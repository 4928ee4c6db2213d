// Package consent is the owner's say over what the node's agents do (the
// Agent Context Protocol's §7.1): a policy naming the privileged operations
// that need the owner's approval, the approvals (pending, approved, denied)
// persisted in a SQLite file, and the list of revoked agents — a revoked
// agent answers nothing until it is unrevoked.
//
// The JSON-RPC layer (agentd/agentrpc) asks Check before a privileged
// operation; the owner answers from the CLI (`agentnode consent list |
// approve | deny | revoke | unrevoke`) through OwnerHandler, mounted on the
// node's HTTP API behind its token. Other transports (DMs, chat) ask
// Revoked(agent) before answering.
//
//	c, err := consent.Open(ctx, consent.Config{Path: filepath.Join(data, "agents", "consent.db")})
//	if err != nil { ... }
//	defer c.Close()
//	err = c.Check(ctx, consent.Request{Op: consent.OpDelegateRemote, Agent: src, Target: dst}, "")
//	var p *consent.PendingError
//	if errors.As(err, &p) { /* tell the caller p.Approval.ID; the owner runs `agentnode consent approve <id>` */ }
//	if c.Revoked(ctx, agent) { /* say nothing */ }
package consent
