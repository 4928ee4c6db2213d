package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentnode/agentnode/events"
)

const defFetchUsage = "def fetch <nevent|note|hex id|naddr|npub:slug> --from URL... [--relay URL]... [--json]"

// fetchResult is def fetch's JSON.
type fetchResult struct {
	ID       string   `json:"id"`
	Title    string   `json:"title"`
	Author   string   `json:"author"` // npub
	From     []string `json:"from"`
	Accepted []string `json:"accepted_by"`
}

// runDefFetch: def fetch (see defFetchUsage). It finds a definition on
// other relays (--from, repeatable) and stores the author's signed event,
// unchanged, on this node's relay (--relay), so that agent install and the
// daemon find it there. The event keeps its author's signature: the node
// checks it like any other publish.
func runDefFetch(ctx context.Context, m *Main, args []string) error {
	const cmd = "def fetch"
	fs := m.newFlagSet(cmd, defFetchUsage)
	var to, from netFlags
	m.addNetFlags(fs, &to)
	fs.Var(&from.relays, "from", "relay to fetch the definition from, repeatable (required)")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("%s: want exactly one definition reference, got %d", cmd, len(pos))
	}
	if len(from.relays) == 0 {
		return usagef("%s: --from: name at least one relay to fetch from", cmd)
	}
	ref, err := parseDefRef(pos[0])
	if err != nil {
		return usagef("%s: %v", cmd, err)
	}
	from.timeout = to.timeout
	res, err := fetchDefinition(ctx, m, ref, &from, &to)
	if err != nil {
		return fmt.Errorf("%s: %w", cmd, err)
	}
	if *asJSON {
		return writeJSON(m.Stdout, res)
	}
	fmt.Fprintf(m.Stdout, "fetched definition %q %s\n  author      %s\n  from        %s\n  stored on   %s\n",
		res.Title, res.ID, res.Author, strings.Join(res.From, ", "), strings.Join(res.Accepted, ", "))
	return nil
}

// fetchDefinition resolves ref on the --from relays and republishes the
// event it names to the --relay ones.
func fetchDefinition(ctx context.Context, m *Main, ref defRef, from, to *netFlags) (*fetchResult, error) {
	src, err := m.dial(ctx, from)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	d, err := ref.resolve(ctx, src)
	if err != nil {
		return nil, err
	}
	evt, err := src.get(ctx, d.ID)
	if err != nil || evt == nil {
		return nil, fmt.Errorf("definition %s vanished from %s: %v", d.ID, strings.Join(src.urls, ", "), err)
	}
	if evt.Kind != events.KindDefinition {
		return nil, fmt.Errorf("event %s is kind %d, not a definition", evt.ID, evt.Kind)
	}
	dst, err := m.dial(ctx, to)
	if err != nil {
		return nil, err
	}
	defer dst.Close()
	accepted, err := dst.publish(ctx, evt)
	if len(accepted) == 0 {
		return nil, fmt.Errorf("no relay stored it: %w", err)
	}
	return &fetchResult{ID: d.ID, Title: d.Title, Author: npub(d.PubKey), From: src.urls, Accepted: accepted}, nil
}
