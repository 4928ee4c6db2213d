package main

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/agentnode/agentnode/agentd/cluster"
	"github.com/agentnode/agentnode/agentd/lease"
)

// openCluster opens what --postgres adds (agentd/cluster: the agents'
// data and leases shared by the instances, forwarding to the instance
// running an agent); without it the node is alone (cluster.Single).
func (c *ServeCommand) openCluster(ctx context.Context, logger *slog.Logger) error {
	c.cluster = cluster.Single{}
	url := c.postgresURL()
	if url == "" {
		return nil
	}
	s, err := cluster.Open(ctx, cluster.Config{URL: url, DataDir: c.Config.DataDir, LeaseTTL: c.leaseTTL(),
		AdvertiseURL: c.advertiseURL(), CallTimeout: seconds(c.httpConfig().LongWriteTimeoutSeconds), Logger: logger})
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	c.cluster = s
	c.onClose(s.Close) // after every part opened later: hands the leases back
	return nil
}

// joinCluster hands the daemon, the DMs and what a change made by another
// instance reloads to the cluster; every installed agent gets its lease.
func (c *ServeCommand) joinCluster(ctx context.Context, _ *slog.Logger) error {
	return c.cluster.Join(ctx, cluster.Local{Agents: c.daemon, DMs: c.rt.dm, Reload: cluster.Reloads{
		Revoked: c.acp.consent.Reload,
		Tasks: func(ctx context.Context) error {
			c.acp.tasks.Wake()
			return c.pickupTasks(ctx) // one delegated elsewhere to an agent running here
		},
		Consent:       func(context.Context) error { c.acp.consent.Wake(); return nil },
		Registrations: c.rt.dir.ReloadRegistrations,
	}})
}

// runsHere reports whether agent runs on this instance: installed, and
// with --postgres also held and replayed here.
func (c *ServeCommand) runsHere(agent string) bool {
	return c.isLocal(agent) && c.cluster.Runs(agent)
}

// pickupTasks starts the tasks of the agents running here that another
// instance left (agentrpc.Config.Runs): on a task change elsewhere and
// when an agent starts running here (a takeover resumes its tasks).
func (c *ServeCommand) pickupTasks(ctx context.Context) error {
	if c.acp == nil || c.acp.svc == nil {
		return nil
	}
	return c.acp.svc.Pickup(ctx)
}

// leaseTTL is --lease-ttl, else the config's postgres.lease_ttl_seconds,
// else lease.DefaultTTL.
func (c *ServeCommand) leaseTTL() time.Duration {
	var file time.Duration
	if c.file != nil {
		file = time.Duration(c.file.Postgres.LeaseTTLSeconds * float64(time.Second))
	}
	return cmp.Or(c.Config.LeaseTTL, file, lease.DefaultTTL)
}

// advertiseURL is where other instances reach this one: --advertise-url,
// else the config's postgres.advertise_url, else http:// and the bound
// address (the host name instead of an unspecified address).
func (c *ServeCommand) advertiseURL() string {
	if c.Config.AdvertiseURL != "" {
		return c.Config.AdvertiseURL
	}
	if c.file != nil && c.file.Postgres.AdvertiseURL != "" {
		return c.file.Postgres.AdvertiseURL
	}
	host, port, err := net.SplitHostPort(c.Addr())
	if err != nil {
		return "http://" + c.Addr()
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		if h, err := os.Hostname(); err == nil {
			host = h
		}
	}
	return "http://" + net.JoinHostPort(host, port)
}
