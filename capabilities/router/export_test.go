package router

// New is NewWith with zero Options.
func New(installed []Route) *Router { return NewWith(installed, Options{}) }

func (l *lru) len() int { return l.order.Len() }
