package main

import (
	"context"
	"log/slog"
	"path/filepath"
	"slices"
	"time"

	"github.com/agentnode/agentnode/agentd/directory"
	"github.com/agentnode/agentnode/events"
)

// agentCapacity is how many tasks a local agent advertises it takes at
// once in its heartbeats.
const agentCapacity = 4

// openDirectory builds the agent directory (docs/DIRECTORY.md) over the
// relay (its Run loads what the relay holds) and the heartbeater of the
// local agents. Nothing runs yet.
func (c *ServeCommand) openDirectory(ctx context.Context, logger *slog.Logger) error {
	var allow []string
	for _, a := range c.trustConfig().Allowlist {
		if pk, err := events.ParsePubKey(a); err == nil {
			allow = append(allow, pk)
		}
	}
	var dc serveDirectory
	if c.file != nil {
		dc = c.file.Directory
	}
	dcfg := directory.Config{Source: c.relay, Allowlist: allow,
		HeartbeatTTL: time.Duration(dc.TTLSeconds) * time.Second,
		Local:        func(pk string) bool { return slices.Contains(c.agentKeys(), pk) },
		Logger:       logger.With("component", "directory")}
	c.cluster.ConfigureDirectory(&dcfg) // --postgres: in the database
	if dcfg.Registrations == nil {      // one node: registrations (proven and spec-form) survive a restart
		regs, err := directory.OpenFileRegistrations(filepath.Join(c.Config.DataDir, "directory", "registrations.json"))
		if err != nil {
			return err
		}
		dcfg.Registrations = regs
	}
	c.rt.dir = directory.New(dcfg)
	c.rt.beat = directory.NewHeartbeater(directory.HeartbeaterConfig{Agents: c.agentKeys,
		Interval: time.Duration(dc.HeartbeatSeconds) * time.Second,
		Keys:     c.daemon.SecretKey, Status: c.agentStatus, Publish: c.relay.Publish,
		Logger: logger.With("component", "heartbeat")})
	c.rt.quiet, c.rt.silence = context.WithCancel(context.Background())
	c.onClose(func(context.Context) error { c.rt.silence(); return nil })
	return nil
}

// runBeats beats for the local agents until ctx ends, then sends their
// offline beat (best effort: peers learn at once that the agents left).
func (c *ServeCommand) runBeats(ctx context.Context) error {
	bctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(c.rt.quiet, cancel)()
	if err := c.rt.beat.Run(bctx); err != nil {
		return err
	}
	<-ctx.Done() // silenced: the part still runs until stopped
	if c.rt.quiet.Err() != nil {
		return nil
	}
	offCtx, offCancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer offCancel()
	_ = c.rt.beat.Offline(offCtx)
	return nil
}

// agentStatus is what a local agent's heartbeat says: its installed
// capabilities (package names and their tools) and its load.
func (c *ServeCommand) agentStatus(agent string) directory.Status {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	st := directory.Status{Status: events.StatusActive, Capacity: agentCapacity, Load: c.agentLoad(agent)}
	if st.Load >= st.Capacity {
		st.Status = events.StatusBusy
	}
	caps, _ := c.daemon.Caps(ctx, agent)
	for _, ic := range caps {
		st.Capabilities = append(st.Capabilities, ic.Name)
		st.Capabilities = append(st.Capabilities, ic.Tools...)
	}
	if a, err := c.daemon.Lookup(agent); err == nil {
		st.Card = &events.AgentCard{Name: a.Name}
	}
	return st
}
