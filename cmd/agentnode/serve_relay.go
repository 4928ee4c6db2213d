package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentnode/agentnode/agentd"
	"github.com/agentnode/agentnode/agentd/cluster"
	"github.com/agentnode/agentnode/agentd/lease"
	"github.com/agentnode/agentnode/agentd/lookup"
	"github.com/agentnode/agentnode/agentd/peers"
	"github.com/agentnode/agentnode/blossom"
	"github.com/agentnode/agentnode/capabilities/bindings"
	"github.com/agentnode/agentnode/events"
	"github.com/agentnode/agentnode/internal/httplimit"
	"github.com/agentnode/agentnode/internal/redact"
	"github.com/agentnode/agentnode/relay"
	"github.com/agentnode/agentnode/web"
	"github.com/nbd-wtf/go-nostr"
)

// The relay's side of serve, in Open's order: the Blossom blob server,
// the cluster (--postgres), --peer sync, on-demand lookups, and relay
// management (NIP-86 operators).

// serveBlossom is the --config "blossom" section: the node's Blossom
// server (docs/BLOSSOM.md). Zero or absent fields take the defaults.
//
//	"blossom": {"dir": "/shared/blobs", "base_url": "https://node.example",
//	            "max_blob_bytes": 268435456, "max_uploads": 4,
//	            "quota_bytes_per_uploader": 1073741824, "quota_blobs_per_uploader": 10000,
//	            "quota_bytes_total": 10737418240, "uploaders": "node" | "anyone" | "none",
//	            "allow": ["npub1..."], "fetch_allow_private": false, "fetch_allow_hosts": ["files.intranet"]}
type serveBlossom struct {
	Dir                   string   `json:"dir"`
	BaseURL               string   `json:"base_url"`
	MaxBlobBytes          int64    `json:"max_blob_bytes" min:"0"`
	MaxUploads            int      `json:"max_uploads" min:"0"`
	QuotaBytesPerUploader int64    `json:"quota_bytes_per_uploader" min:"0" default:"1073741824"` // 1 GiB
	QuotaBlobsPerUploader int      `json:"quota_blobs_per_uploader" min:"0" default:"10000"`      // bounds a list and a quota count
	QuotaBytesTotal       int64    `json:"quota_bytes_total" min:"0" default:"10737418240"`       // 10 GiB
	Uploaders             string   `json:"uploaders"`
	Allow                 []string `json:"allow"`
	FetchAllowPrivate     bool     `json:"fetch_allow_private"`
	FetchAllowHosts       []string `json:"fetch_allow_hosts"`

	allow []string // Allow as hex
}

// check refuses unknown uploader policies and parses the allow-list.
func (b *serveBlossom) check(string) error {
	switch b.Uploaders {
	case "", "node", "anyone", "none":
	default:
		return fmt.Errorf(`"blossom.uploaders" %q: want "node" (the default: the node's agents, their owners, their definitions' authors and "allow"), "anyone" or "none" ("allow" only)`, b.Uploaders)
	}
	b.allow = nil
	for _, a := range b.Allow {
		pk, err := events.ParsePubKey(a)
		if err != nil {
			return fmt.Errorf(`"blossom.allow" %q: %v`, a, err)
		}
		b.allow = append(b.allow, pk)
	}
	return nil
}

// blossomConfig is the "blossom" section in force.
func (c *ServeCommand) blossomConfig() serveBlossom { return c.conf().Blossom }

// blobDir is where blobs live: --blobs, else the section's dir, else
// <data>/blobs.
func (c *ServeCommand) blobDir() string {
	if c.Config.Blobs != "" {
		return c.Config.Blobs
	}
	if d := c.blossomConfig().Dir; d != "" {
		return d
	}
	return filepath.Join(c.Config.DataDir, "blobs")
}

// blobFetcher is the SSRF-guarded client of mirrors and of installs'
// file fetches.
func (c *ServeCommand) blobFetcher() *http.Client {
	b := c.blossomConfig()
	return bindings.GuardedClient(b.FetchAllowPrivate, b.FetchAllowHosts)
}

// openBlossom opens the blob store and builds the Blossom server that
// mountEndpoints puts in front of the relay.
func (c *ServeCommand) openBlossom(_ context.Context, logger *slog.Logger) error {
	b := c.blossomConfig()
	st, err := blossom.OpenStore(c.blobDir(), blossom.Quota{BytesPerUploader: b.QuotaBytesPerUploader,
		BlobsPerUploader: b.QuotaBlobsPerUploader, TotalBytes: b.QuotaBytesTotal})
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	c.blobs = blossom.NewServer(st, blossom.Options{BaseURL: b.BaseURL, MaxBlobBytes: b.MaxBlobBytes,
		MaxUploads: b.MaxUploads, MayUpload: c.mayUpload, UploadPolicy: b.policy(), Fetch: c.blobFetcher()})
	c.blobStore = st
	logger.Info("blossom server", "dir", st.Dir(), "uploaders", b.policy())
	return nil
}

// policy is the sentence a refused uploader reads.
func (b serveBlossom) policy() string {
	switch b.Uploaders {
	case "anyone":
		return "this node takes uploads from anyone"
	case "none":
		return "this node takes uploads only from the keys its operator allowed"
	}
	return "this node takes uploads from its agents, their owners, the authors of their definitions and the keys its operator allowed"
}

// mayUpload is the uploader allow-list (serveBlossom.Uploaders).
func (c *ServeCommand) mayUpload(_ context.Context, pk string) bool {
	b := c.blossomConfig()
	switch {
	case b.Uploaders == "anyone", contains(b.allow, pk), pk == c.nodeConfig().PubKey:
		return true
	case b.Uploaders == "none" || c.daemon == nil:
		return false
	}
	for _, a := range c.daemon.List() {
		if a.PubKey == pk || a.Owner == pk || definitionAuthor(a) == pk {
			return true
		}
	}
	return false
}

// definitionAuthor is the author of a's definition (DefinitionKey is
// author:slug or author:title).
func definitionAuthor(a agentd.Agent) string {
	author, _, _ := strings.Cut(a.DefinitionKey, ":")
	return author
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// bodyBound is httplimit.Body(max) except for Blossom uploads, whose
// body the Blossom server bounds itself ("blossom.max_blob_bytes").
func bodyBound(max int64, next http.Handler) http.Handler {
	bounded := httplimit.Body(max, next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut && r.URL.Path == "/upload" {
			next.ServeHTTP(w, r)
			return
		}
		bounded.ServeHTTP(w, r)
	})
}

// defFiles is how installs fetch definitions' files: through the
// SSRF-guarded client, else from the node's own blobs.
func (c *ServeCommand) defFiles() agentd.DefFiles {
	return agentd.DefFiles{HTTP: c.blobFetcher(), MaxBytes: c.blossomConfig().MaxBlobBytes,
		Local: func(sha string) (io.ReadCloser, error) {
			f, _, err := c.blobStore.Open(sha)
			return f, err
		}}
}

// webFiles are a local agent's definition files for its web page.
func (c *ServeCommand) webFiles(_ context.Context, agent string) ([]web.File, error) {
	files, err := c.daemon.Files(agent)
	out := make([]web.File, 0, len(files))
	for _, f := range files {
		out = append(out, web.File{Name: f.Name, SHA256: f.SHA256, Size: f.Size})
	}
	return out, err
}

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
		AdvertiseURL: c.advertiseURL(), CallTimeout: c.httpConfig().LongWriteTimeout, Logger: logger})
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
	return cmp.Or(c.Config.LeaseTTL, c.conf().Postgres.LeaseTTL, lease.DefaultTTL)
}

// advertiseURL is where other instances reach this one: --advertise-url,
// else the config's postgres.advertise_url, else http:// and the bound
// address (the host name instead of an unspecified address).
func (c *ServeCommand) advertiseURL() string {
	if c.Config.AdvertiseURL != "" {
		return c.Config.AdvertiseURL
	}
	if u := c.conf().Postgres.AdvertiseURL; u != "" {
		return u
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

// openPeers prepares the peer syncer for --peer relays (nil when none):
// it pulls what the node's agents need (Daemon.Interests) into the local
// relay and pushes the agents' own events (Daemon.Outbox) to each peer;
// followAgents tells it when the interests change.
func (c *ServeCommand) openPeers(_ context.Context, logger *slog.Logger) error {
	if len(c.Config.Peers) == 0 {
		return nil
	}
	for _, p := range c.Config.Peers {
		if !strings.HasPrefix(p, "ws://") && !strings.HasPrefix(p, "wss://") {
			return usagef("serve: --peer %q: want a ws:// or wss:// relay URL", redact.URL(p))
		}
	}
	marks, err := peers.OpenFileWatermarks(c.Config.DataDir)
	if err != nil {
		return fmt.Errorf("serve: peers: %w", err)
	}
	c.peers = peers.New(peers.Config{
		Peers:      c.Config.Peers,
		Local:      c.relay,
		Interests:  func() []nostr.Filter { return c.daemon.Interests() }, // called from Run, after Open
		Outbox:     func() []nostr.Filter { return c.daemon.Outbox() },
		Watermarks: marks,
		Logger:     logger,
	})
	c.onClose(unhooked(c.relay.OnStored(c.peers.Notify)))
	return nil
}

// runPeers runs the syncer until ctx ends (without --peer: nothing).
func (c *ServeCommand) runPeers(ctx context.Context) error {
	if c.peers == nil {
		<-ctx.Done()
		return nil
	}
	return c.peers.Run(ctx)
}

// openLookup prepares on-demand lookups (agentd/lookup): when owner
// verification (GET /api/verify, /api/owners/…/agents, the state
// replicators' directory) lacks an agent's profile, an owner's claims or a
// relay list, the node asks its --peer relays and the author's NIP-65
// write relays, within the lookup budgets, and stores what it finds. The
// same lookups find a definition `agent install` names that is not local
// (findDefinition), a capability package by its naddr (the registry reads
// through verifyReader) and the root lesson of a stored comment (the
// follower, run by runLookup).
func (c *ServeCommand) openLookup(_ context.Context, logger *slog.Logger) error {
	var self []string
	if c.ln != nil {
		self = append(self, "ws://"+c.ln.Addr().String())
	}
	c.lookup = lookup.New(lookup.Config{
		Local:   c.relay,
		Peers:   func() []string { return c.Config.Peers },
		Self:    self,
		Network: c.relayPolicy(), // hints strangers give: public addresses only, unless allowed
		Logger:  logger.With("component", "lookup"),
	})
	c.relay.SetVerifier(c.lookup.Querier())
	c.follower = c.lookup.Follower()
	c.onClose(unhooked(c.relay.OnStored(c.follower.Notify)))
	return nil
}

// runLookup follows stored comments' roots until ctx ends.
func (c *ServeCommand) runLookup(ctx context.Context) error {
	if c.follower == nil {
		<-ctx.Done()
		return nil
	}
	return c.follower.Run(ctx)
}

// findDefinition is the daemon's FindDefinition: ref looked up on the
// peers, the author's NIP-65 write relays and the relays its nevent or
// naddr names; what is found is stored in the relay.
func (c *ServeCommand) findDefinition(ctx context.Context, ref agentd.DefinitionRef) error {
	if c.lookup == nil {
		return lookup.ErrNotFound
	}
	p := lookup.Pointer{ID: ref.ID, Kind: events.KindDefinition, Author: ref.Author, Relays: ref.Relays}
	_, err := c.lookup.Resolve(ctx, p)
	return err
}

// verifyReader is what owner verification reads: the relay, looking up
// what it lacks once openLookup has run.
func (c *ServeCommand) verifyReader() relay.Querier {
	if c.lookup == nil {
		return c.relay
	}
	return c.lookup.Querier()
}

// operatorKeys parses the "relay" section's operators (npub, nprofile or
// hex) to hex.
func operatorKeys(keys []string) ([]string, error) {
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		pk, err := events.ParsePubKey(k)
		if err != nil {
			return nil, fmt.Errorf(`"relay.operators": %q: %v`, k, err)
		}
		out = append(out, pk)
	}
	return out, nil
}

// relayOperators are the pubkeys that may manage the relay over NIP-86
// (checked by ParseFlags).
func (c *ServeCommand) relayOperators() []string {
	if c.file == nil {
		return nil
	}
	ops, _ := operatorKeys(c.file.Relay.Operators)
	return ops
}

// agentKindsOnly is the "relay" section's agent_kinds_only switch.
func (c *ServeCommand) agentKindsOnly() bool {
	return c.file != nil && c.file.Relay.AgentKindsOnly
}
