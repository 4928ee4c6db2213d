// Package stopsignal turns SIGINT and SIGTERM into the end of a context
// whose cause names the signal. main calls it first thing; nothing happens
// at import:
//
//	ctx, stop := stopsignal.NotifyContext(context.Background())
//	defer stop()
//
// A signal that comes while the runtime still initialises packages (before
// main; tens of milliseconds, a JSON Schema library compiles its
// metaschemas in init) has the default effect, as in any Go program: the
// process ends (SIGTERM: exit 143).
package stopsignal
