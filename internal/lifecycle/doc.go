// Package lifecycle runs the long-lived parts of a program as one unit:
// started in order, each once the one before is ready, and stopped in
// reverse order when the context ends or the first part fails.
//
// Every part has the shape the project's components share: a constructor
// that only builds, and Run(ctx) error that owns the part's goroutines and
// returns when ctx ends (Func). A part the next ones must wait for says so
// on a channel (Ready).
//
//	err := lifecycle.Run(ctx,
//		lifecycle.Func("peers", syncer.Run),
//		lifecycle.Ready("a2a server", srv.Run, srv.Ready()),
//		lifecycle.Ready("dm", svc.Run, svc.Ready()),
//		lifecycle.Func("http", serveHTTP),
//	)
//
// A stop requested while a part starts makes that start fail with ctx's
// error; Run then stops what already runs and returns that error, which
// the caller may treat as a clean stop (ctx.Err() != nil).
package lifecycle
