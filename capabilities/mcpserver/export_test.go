package mcpserver

import "time"

// SetClock sets the session gates' clock of o (tests).
func SetClock(o *Options, now func() time.Time) { o.now = now }
