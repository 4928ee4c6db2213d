package backoff

import (
	"context"
	"time"
)

// Retry describes a session that ended and the wait before the next.
type Retry struct {
	Attempt int           // failed sessions in a row before this one (0 after a healthy one)
	Healthy bool          // the session that ended counted as up
	Err     error         // why it ended
	Wait    time.Duration // the wait before the next session
}

// Loop runs session, waits, and runs it again, until ctx ends; it returns
// then. The waits follow b: Delay(0), Delay(1), ... for sessions that
// fail in a row; a session that reports healthy (it connected and caught
// up, or ran long enough) starts the schedule over. ended, if not nil, is
// told of each session's end before the wait (not when ctx ended it).
func (b Backoff) Loop(ctx context.Context, session func(context.Context) (healthy bool, err error), ended func(Retry)) {
	for attempt := 0; ; attempt++ {
		healthy, err := session(ctx)
		if ctx.Err() != nil {
			return
		}
		if healthy {
			attempt = 0
		}
		r := Retry{Attempt: attempt, Healthy: healthy, Err: err, Wait: b.Delay(attempt)}
		if ended != nil {
			ended(r)
		}
		if !Sleep(ctx, r.Wait) {
			return
		}
	}
}
