// Command agentnode is one node of the Nostr agent network: an embedded
// relay for agent events plus the CLI people use to publish, browse and
// verify them. Run `agentnode help` for the subcommands.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/agentnode/agentnode/capabilities/bindings"
	"github.com/agentnode/agentnode/cmd/agentnode/internal/stopsignal"
)

func main() {
	bindings.SandboxExecMain() // a sandboxed MCP server starts through this binary (capabilities/bindings/sandbox.go)
	// SIGINT and SIGTERM end ctx from here on (before, during package
	// initialisation, they have their default effect).
	ctx, stop := stopsignal.NotifyContext(context.Background())
	m := NewMain()
	err := m.Run(ctx, os.Args[1:])
	stop()
	if err != nil && !errors.Is(err, errHelpShown) {
		fmt.Fprintln(os.Stderr, "agentnode:", err)
		os.Exit(exitCode(err))
	}
}
