// Package agentd is the agent daemon: it instantiates agents from NIP-AE
// definitions (kind 4199), keeps one keypair per agent (agentd/keystore),
// publishes each agent's kind 0 and the lessons it learns, and composes
// each agent's effective behaviour — definition + nudges + the lessons its
// trust policy admits — with the lessons package, recomposing live when
// the store receives an event that changes the inputs. docs/AGENTD.md
// describes the files, the API and the invalidation rules.
//
// The daemon owns two small interfaces: Store (publish and query; the
// embedded relay satisfies it in-process) and Notifier (a callback on every
// stored event; relay.Relay.OnStored). It never holds an owner's key: the
// owner confirms an agent with their own kind 14199 (`agentnode claim add`).
//
//	d, err := agentd.Open(ctx, agentd.Config{DataDir: dir, Store: r, Notifier: r,
//		Trust: lessons.Config{Allowlist: []string{"npub1..."}}})
//	if err != nil { ... }
//	defer d.Close(ctx)
//	go d.Run(ctx) // recomposes in the background until ctx ends
//	for range d.Changes() { syncer.Refresh() } // the agents' interests moved
//
//	res, err := d.Install(ctx, agentd.InstallRequest{Definition: "npub1...:code-reviewer", Owner: "npub1..."})
//	fmt.Println(res.ClaimCommand) // agentnode claim add npub1<agent>
//	eff, err := d.Effective(ctx, res.Npub)    // prompt, tools, lessons with provenance
//	_, err = d.Learn(ctx, res.Npub, "Prefer table tests", "testing", "Use table tests.")
//	plan, err := d.PlanUpgrade(ctx, res.Npub, "") // diff against the latest version
//
// It also runs the agents' capabilities (docs/AGENTD.md, "Capabilities"):
// InstallCap / UpgradeCap / RemoveCap install signed ACP packages per
// agent (resolved through Config.Capabilities, cached on disk); Tools is an
// agent's tool executor (state.* through Config.State, lesson.learn, then
// the package's bindings through Config.Bindings); Chat runs a message
// through the agent's router and the model loop (Config.Model); CapSource
// serves CAP (capabilities/cap).
//
//	ch, err := d.InstallCap(ctx, res.Npub, agentd.CapInstallRequest{Ref: "did:nuwa:cap:note"})
//	reply, err := d.Chat(ctx, res.Npub, "conversation-1", "note: buy milk")
//
// Daemon.Handler is the same API over HTTP (JSON under /api/agents), which
// `agentnode serve` mounts on the relay and `agentnode agent ...` calls
// through Client.
package agentd
