package router

import (
	"strings"
	"sync"
)

// Limits.
const (
	// MaxConversations is how many conversations keep a stack; past it the
	// least recently routed one forgets its stack (it falls back to
	// triggers on its next message).
	MaxConversations = 4096
	// MaxDepth is how deep one conversation's stack gets; a push past it
	// drops the bottom entry.
	MaxDepth = 8
)

// Decision is where one message goes.
type Decision struct {
	Capability string // the capability's id; "" = the agent's own prompt
	Message    string // the message with a /switch or /back command stripped
	Reason     string // "switch", "back", "stack", "trigger:<value>", "fallback"
	Reply      string // non-empty: the command is answered, no model call needed
}

// Reasons.
const (
	ReasonSwitch   = "switch"
	ReasonBack     = "back"
	ReasonStack    = "stack"
	ReasonTrigger  = "trigger:" // followed by the trigger's value
	ReasonFallback = "fallback"
)

// Router holds the installed capabilities and every conversation's stack.
// It is safe for concurrent use; routes of one conversation are applied
// in the order Route is called.
type Router struct {
	mu        sync.Mutex
	installed []compiled
	bad       []error
	convs     *lru
}

// New returns a router over installed, in install order: that order
// breaks ties between triggers. Triggers that cannot match (a regex that
// does not compile, an unknown type) are dropped; BadTriggers lists them.
func New(installed []Route) *Router {
	r := &Router{convs: newLRU(MaxConversations)}
	r.installed, r.bad = compileAll(installed)
	return r
}

func compileAll(routes []Route) ([]compiled, []error) {
	var bad []error
	out := make([]compiled, 0, len(routes))
	for _, rt := range routes {
		c, b := compile(rt)
		out = append(out, c)
		bad = append(bad, b...)
	}
	return out, bad
}

// BadTriggers returns the triggers New or SetInstalled dropped, as
// *TriggerError.
func (r *Router) BadTriggers() []error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]error(nil), r.bad...)
}

// SetInstalled replaces the installed list. A capability no longer
// installed leaves every stack it was on.
func (r *Router) SetInstalled(installed []Route) {
	c, bad := compileAll(installed)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.installed, r.bad = c, bad
	keep := make(map[string]bool, len(c))
	for _, x := range c {
		keep[x.ID] = true
	}
	r.convs.filter(func(id string) bool { return keep[id] })
}

// Route decides where message goes in conversation and updates the
// conversation's stack.
func (r *Router) Route(conversation, message string) Decision {
	r.mu.Lock()
	defer r.mu.Unlock()
	cmd, arg, rest := parseCommand(message)
	switch cmd {
	case cmdBack:
		return r.back(conversation, rest)
	case cmdSwitch:
		return r.switchTo(conversation, arg, rest)
	}
	return r.routeOn(conversation, message)
}

// Done pops conversation's top capability (a tool result said
// {"done": true}) and returns its id, or "" when the stack was empty.
func (r *Router) Done(conversation string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.convs.pop(conversation)
}

// Stack returns conversation's stack, bottom first, top last.
func (r *Router) Stack(conversation string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.convs.get(conversation)...)
}

// routeOn applies the stack, then triggers, then the fallback.
func (r *Router) routeOn(conv, msg string) Decision {
	if top := r.convs.top(conv); top != "" {
		return Decision{Capability: top, Message: msg, Reason: ReasonStack}
	}
	for i := range r.installed {
		if v, ok := r.installed[i].matchMessage(msg); ok {
			r.convs.push(conv, r.installed[i].ID)
			return Decision{Capability: r.installed[i].ID, Message: msg, Reason: ReasonTrigger + v}
		}
	}
	return Decision{Message: msg, Reason: ReasonFallback}
}

// lookup finds a capability by full id, then name@version, then name,
// then display name (case-insensitive); the first installed wins.
func (r *Router) lookup(name string) *compiled {
	for level := 0; level < 4; level++ {
		for i := range r.installed {
			names := r.installed[i].names()
			if level < len(names) && strings.EqualFold(names[level], name) {
				return &r.installed[i]
			}
		}
	}
	return nil
}

// label is how replies name a capability.
func (r *Router) label(id string) string {
	if id == "" {
		return "the agent"
	}
	for i := range r.installed {
		if r.installed[i].ID == id && r.installed[i].Name != "" {
			return r.installed[i].Name
		}
	}
	return strings.TrimPrefix(id, "did:nuwa:cap:")
}
