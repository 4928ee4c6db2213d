package metrics

import (
	"errors"
	"sync"
)

// errHTTPStatus marks an agent call over HTTP answered with a 4xx or 5xx.
var errHTTPStatus = errors.New("metrics: http error status")

// routeSet admits at most max distinct route labels; later ones are
// "other", so the label set cannot grow without bound.
type routeSet struct {
	mu   sync.Mutex
	max  int
	seen map[string]bool
}

func newRouteSet(max int) *routeSet {
	return &routeSet{max: max, seen: map[string]bool{}}
}

// label is route if it is known or there is room for it, else "other".
func (s *routeSet) label(route string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen[route] {
		return route
	}
	if len(s.seen) >= s.max {
		return "other"
	}
	s.seen[route] = true
	return route
}
