package web

import (
	"context"
	"net/http"
	"time"
)

// turn waits up to RenderWait for one of the MaxRenders turns to build a
// page: memory and CPU spent on pages stay bounded however many requests
// arrive, and /healthz and the relay keep their share. ok is false when
// no turn came (or the client left); release gives the turn back.
func (s *Site) turn(ctx context.Context) (release func(), ok bool) {
	select {
	case s.renders <- struct{}{}:
		return func() { <-s.renders }, true
	default:
	}
	timer := time.NewTimer(s.cfg.RenderWait)
	defer timer.Stop()
	select {
	case s.renders <- struct{}{}:
		return func() { <-s.renders }, true
	case <-timer.C:
	case <-ctx.Done():
	}
	return nil, false
}

// busy answers a request that got no turn: 503 with Retry-After.
func busy(w http.ResponseWriter) {
	w.Header().Set("Retry-After", "1")
	http.Error(w, "busy: too many pages are being built at once; retry in a second", http.StatusServiceUnavailable)
}
