package main

import (
	"context"
	"time"

	"github.com/agentnode/agentnode/agentd/state"
)

// Defaults of the --config file's "state" section.
const (
	defaultLifecycleInterval = 5 * time.Minute
)

// serveStateConfig is the --config file's "state" section:
//
//	"state": {"lifecycle_seconds": 300, "anti_entropy_seconds": 60}
//
// lifecycle_seconds is how often the lifecycle (x-ttl, x-retention,
// x-compression) runs over the whole store (0 or absent: 300; negative:
// never); anti_entropy_seconds how often each replicator sends its digests
// to the owner's agents (0 or absent: 60; negative: never). docs/ASM.md §8,
// §9.4.
type serveStateConfig struct {
	LifecycleSeconds   int `json:"lifecycle_seconds"`
	AntiEntropySeconds int `json:"anti_entropy_seconds"`
}

// stateSeconds turns a config value into an interval: 0 is def, negative is
// off (0).
func stateSeconds(v int, def time.Duration) time.Duration {
	switch {
	case v == 0:
		return def
	case v < 0:
		return 0
	}
	return time.Duration(v) * time.Second
}

// stateConfig is the "state" section, or its zero value without a file.
func (c *ServeCommand) stateConfig() serveStateConfig {
	return c.conf().State
}

// antiEntropyInterval is the replicators' AntiEntropyInterval.
func (c *ServeCommand) antiEntropyInterval() time.Duration {
	d := stateSeconds(c.stateConfig().AntiEntropySeconds, time.Minute)
	if d == 0 {
		return -1
	}
	return d
}

// runStateLifecycle runs the state lifecycle every lifecycle_seconds
// until ctx ends (counts of each pass that did something are logged).
func (c *ServeCommand) runStateLifecycle(ctx context.Context) error {
	every := stateSeconds(c.stateConfig().LifecycleSeconds, defaultLifecycleInterval)
	if every == 0 {
		c.asm.log.Info("state lifecycle off (state.lifecycle_seconds < 0)")
		<-ctx.Done()
		return nil
	}
	lc := state.NewLifecycle(c.asm.rt, state.LifecycleOptions{Logger: c.asm.log})
	c.asm.log.Info("state lifecycle scheduled", "every", every)
	return lc.Run(ctx, every)
}
