// Command agentnode is one node of the Nostr agent network: an embedded
// relay for agent events plus the CLI people use to publish, browse and
// verify them. Run `agentnode help` for the subcommands.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	m := NewMain()
	err := m.Run(ctx, os.Args[1:])
	stop()
	if err != nil && !errors.Is(err, errHelpShown) {
		fmt.Fprintln(os.Stderr, "agentnode:", err)
		os.Exit(exitCode(err))
	}
}
