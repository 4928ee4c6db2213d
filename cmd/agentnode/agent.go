package main

import (
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/agentnode/agentnode/agentd"
)

// DefaultNode is the HTTP address of the local node's agent API.
const DefaultNode = "http://" + DefaultListen

// agentFlags are the flags of every agent subcommand. The agent commands
// talk to the daemon inside a running `agentnode serve` over HTTP
// (/api/agents); writes carry the node's API token, read from the data
// directory (or AGENTNODE_API_TOKEN).
type agentFlags struct {
	node    string
	data    string
	timeout time.Duration
	json    bool
}

func (m *Main) addAgentFlags(fs *flag.FlagSet, f *agentFlags) {
	fs.StringVar(&f.node, "node", m.envOr("AGENTNODE_NODE", DefaultNode), "the running node's HTTP address (env AGENTNODE_NODE)")
	fs.StringVar(&f.data, "data", m.envOr("AGENTNODE_DATA", DefaultDataDir), "the node's data directory, for its API token (env AGENTNODE_DATA; or set AGENTNODE_API_TOKEN)")
	fs.DurationVar(&f.timeout, "timeout", DefaultTimeout, "bound on the call")
	fs.BoolVar(&f.json, "json", false, "print JSON")
}

// client returns an API client; write commands need the token.
func (m *Main) agentClient(cmd string, f *agentFlags, write bool) (*agentd.Client, error) {
	c := &agentd.Client{BaseURL: strings.TrimRight(f.node, "/"), HTTP: &http.Client{Timeout: f.timeout}}
	if u, err := url.Parse(c.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, usagef("%s: --node %q: want http://host:port", cmd, f.node)
	}
	c.Token = m.envOr("AGENTNODE_API_TOKEN", "")
	if c.Token == "" && write {
		tok, err := agentd.ReadToken(f.data)
		if err != nil {
			return nil, fmt.Errorf("%s: no API token: set AGENTNODE_API_TOKEN, or --data to the node's data directory (%w)", cmd, err)
		}
		c.Token = tok
	}
	return c, nil
}

// agentErr adds the command name, and a hint when the node is not there.
func agentErr(cmd string, f *agentFlags, err error) error {
	var api *agentd.APIError
	if errors.As(err, &api) {
		return fmt.Errorf("%s: %w", cmd, err)
	}
	return fmt.Errorf("%s: %w (is `agentnode serve` running at %s? see --node)", cmd, err, f.node)
}

// wantArgs checks that exactly n positional arguments were given.
func wantArgs(cmd string, pos []string, n int, what string) error {
	if len(pos) != n {
		return usagef("%s: want %s, got %d argument(s)", cmd, what, len(pos))
	}
	return nil
}

// relayFor is the websocket URL of the node at an HTTP address.
func relayFor(node string) string {
	if rest, ok := strings.CutPrefix(node, "https://"); ok {
		return "wss://" + rest
	}
	return "ws://" + strings.TrimPrefix(node, "http://")
}
