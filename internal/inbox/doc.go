// Package inbox is what the servers that answer Nostr messages addressed
// to local agents (agentd/contextvm, agentd/nostrrpc) share: finding the
// local agent an event p-tags (Addressee), and the workers that drain a
// server's queue (Work).
//
// Use:
//
//	agent, sk, ok := inbox.Addressee(ctx, evt, cfg.Keys)
//
//	var wg sync.WaitGroup
//	inbox.Work(ctx, &wg, cfg.Workers, queue, s.serve) // stop: cancel ctx, then wg.Wait()
package inbox
