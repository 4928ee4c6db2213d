// Package stopsignal catches SIGINT and SIGTERM from the start of the
// process, so that a stop sent while the binary is still initialising is
// a cancelled context like any later one, not the default "killed by a
// signal" (exit 143).
//
// Package initialisation takes tens of milliseconds before main runs (a
// JSON Schema library alone compiles its metaschemas in init), and
// signal.NotifyContext in main comes after all of it. This package's init
// runs early: Go initialises a package once its imports are, and of the
// packages ready, the first by import path (Go 1.21+). It needs only
// os/signal, which is ready long before the slow packages.
//
// Import it for its init in package main, then:
//
//	ctx, stop := stopsignal.NotifyContext(context.Background())
//	defer stop()
package stopsignal
