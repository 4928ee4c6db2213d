package relay

import "time"

// OnLatency registers the relay's latency observers: publish is called
// once a websocket client's EVENT (id and signature valid) got its OK,
// with ok as sent and the time from its handling to the OK; eose once a
// REQ's EOSE is sent, with the time from its accepted filters to the EOSE.
// Either may be nil. They run on the connection's handler goroutine: they
// must be quick and must not block. Call it before serving.
func (r *Relay) OnLatency(publish func(ok bool, d time.Duration), eose func(d time.Duration)) {
	rl := r.khatru.Relay
	if publish != nil {
		rl.OnPublishDone = append(rl.OnPublishDone, publish)
	}
	if eose != nil {
		rl.OnEOSE = append(rl.OnEOSE, eose)
	}
}
