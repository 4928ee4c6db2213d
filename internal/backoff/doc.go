// Package backoff is the project's one retry schedule and reconnect loop:
// a Backoff (Min, doubling up to Max, each wait jittered into its upper
// half so that clients which lost the same server do not all come back
// at once), Sleep (a wait that ends with its context), and Loop (run a
// session, wait, run it again, until the context ends; the schedule
// starts over after a healthy session).
//
// Every wait is a time.Timer: tests drive the schedule with
// testing/synctest instead of real time.
//
// Use:
//
//	b := backoff.Backoff{Min: 250 * time.Millisecond, Max: 30 * time.Second}
//	b.Loop(ctx, func(ctx context.Context) (healthy bool, err error) {
//		conn, err := dial(ctx)
//		if err != nil {
//			return false, err
//		}
//		defer conn.Close()
//		return serve(ctx, conn) // healthy: it got far enough to count as up
//	}, func(r backoff.Retry) { log.Debug("session ended", "err", r.Err, "retry_in", r.Wait) })
//
//	for try := 0; ; try++ { ...; if !backoff.Sleep(ctx, b.Delay(try)) { return ctx.Err() } }
package backoff
