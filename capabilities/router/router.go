package router

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
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
	// DefaultIdleTimeout is how long a conversation may be silent before
	// the top of its stack pops (Options.IdleTimeout).
	DefaultIdleTimeout = 30 * time.Minute
)

// Options tune a Router; the zero value is the defaults.
type Options struct {
	// IdleTimeout: each full IdleTimeout of silence in a conversation pops
	// one entry off its stack (NIP-7: "Router times out ... stack pops").
	// 0 = DefaultIdleTimeout; negative = never.
	IdleTimeout time.Duration
	// Models are the models a capability's llm_requirements choose among
	// (ChooseModel); none = requirements are not checked.
	Models []Model
	// Now is the clock (tests); nil = time.Now.
	Now func() time.Time
	// Embedder, when set, makes embedding triggers match: a message whose
	// embedding's cosine similarity to a trigger's is at least
	// EmbedThreshold (0 = DefaultEmbedThreshold) routes to its capability
	// when no regex or keyword trigger matches. Nil: they never match.
	Embedder       Embedder
	EmbedThreshold float64
}

// Decision is where one message goes.
type Decision struct {
	Capability string // the capability's id; "" = the agent's own prompt
	Message    string // the message with a /switch or /back command stripped
	Reason     string // "switch", "back", "stack", "trigger:<value>", "fallback"
	Reply      string // non-empty: the command is answered, no model call needed
	// Model is the configured model chosen for the capability's
	// llm_requirements ("" = the default model).
	Model string
	// Popped lists what left the stack before this message was routed: by
	// the idle timeout or by re-classification, oldest first.
	Popped []string
}

// Reasons.
const (
	ReasonSwitch   = "switch"
	ReasonBack     = "back"
	ReasonStack    = "stack"
	ReasonTrigger  = "trigger:" // followed by the trigger's value
	ReasonFallback = "fallback"
	// ReasonReclassify: the message matched another capability's triggers
	// better than the top's: the top popped and that one was pushed.
	ReasonReclassify = "reclassify:" // followed by the trigger's value
	// ReasonNoModel: the capability's llm_requirements fit no configured
	// model; Reply says why and the stack did not change.
	ReasonNoModel = "refused:model"
)

// Router holds the installed capabilities and every conversation's stack.
// It is safe for concurrent use; routes of one conversation are applied
// in the order Route is called.
type Router struct {
	mu        sync.Mutex
	installed []compiled
	bad       []error
	convs     *lru
	opts      Options
	vectors   map[string][]float64 // embedding trigger text -> its vector
}

// NewWith returns a router over installed, in install order: that order
// breaks ties between triggers. Triggers that cannot match (a regex that
// does not compile, an unknown type) are dropped; BadTriggers lists them.
func NewWith(installed []Route, opts Options) *Router {
	if opts.IdleTimeout == 0 {
		opts.IdleTimeout = DefaultIdleTimeout
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	r := &Router{convs: newLRU(MaxConversations), opts: opts, vectors: map[string][]float64{}}
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
	r.vectors = map[string][]float64{}
	keep := make(map[string]bool, len(c))
	for _, x := range c {
		keep[x.ID] = true
	}
	r.convs.filter(func(id string) bool { return keep[id] })
}

// Route decides where message goes in conversation and updates the
// conversation's stack.
func (r *Router) Route(conversation, message string) Decision {
	hits := r.similarities(message) // the embeddings request, outside the lock
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.opts.Now()
	popped := r.expire(conversation, now)
	d := r.route(conversation, message, hits)
	d.Popped = append(popped, d.Popped...)
	r.convs.touch(conversation, now)
	return d
}

func (r *Router) route(conv, message string, hits map[string]embedHit) Decision {
	cmd, rest := parseCommand(message)
	switch cmd {
	case cmdBack:
		return r.back(conv, rest)
	case cmdSwitch:
		return r.switchTo(conv, rest)
	}
	return r.routeOn(conv, message, hits)
}

// expire pops one entry per full IdleTimeout since the conversation's
// last message.
func (r *Router) expire(conv string, now time.Time) []string {
	last := r.convs.last(conv)
	if r.opts.IdleTimeout < 0 || last.IsZero() {
		return nil
	}
	var popped []string
	for n := now.Sub(last) / r.opts.IdleTimeout; n > 0 && r.convs.top(conv) != ""; n-- {
		popped = append(popped, r.convs.pop(conv))
	}
	return popped
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

// routeOn applies the stack (unless another capability's triggers match
// better), then triggers, then the fallback.
func (r *Router) routeOn(conv, msg string, hits map[string]embedHit) Decision {
	if top := r.convs.top(conv); top != "" {
		if c, v := r.better(top, msg); c != nil {
			return r.enter(conv, c, Decision{Message: msg, Reason: ReasonReclassify + v, Popped: []string{top}})
		}
		return r.withModel(Decision{Capability: top, Message: msg, Reason: ReasonStack})
	}
	for i := range r.installed {
		if v, ok := r.installed[i].matchMessage(msg); ok {
			return r.enter(conv, &r.installed[i], Decision{Message: msg, Reason: ReasonTrigger + v})
		}
	}
	if c, v := r.embedMatch(hits); c != nil {
		return r.enter(conv, c, Decision{Message: msg, Reason: ReasonTrigger + TriggerEmbedding + ":" + v})
	}
	return Decision{Message: msg, Reason: ReasonFallback}
}

// better returns the installed capability whose triggers match msg more
// often than top's (the first, in install order, of the highest count),
// or nil: the top keeps a message that matches nothing else, or matches
// it at least as well.
func (r *Router) better(top, msg string) (*compiled, string) {
	topScore := 0
	if c := r.byID(top); c != nil {
		topScore, _ = c.score(msg)
	}
	var best *compiled
	bestScore, bestValue := topScore, ""
	for i := range r.installed {
		c := &r.installed[i]
		if c.ID == top {
			continue
		}
		if n, v := c.score(msg); n > bestScore {
			best, bestScore, bestValue = c, n, v
		}
	}
	return best, bestValue
}

// enter pushes c and routes d to it, after popping d.Popped, unless its
// llm_requirements fit no configured model: then the stack stays and the
// refusal is the reply.
func (r *Router) enter(conv string, c *compiled, d Decision) Decision {
	model, err := ChooseModel(c.ID, c.LLM, r.opts.Models)
	if err != nil {
		return r.refuse(conv, c, err)
	}
	for range d.Popped {
		r.convs.pop(conv)
	}
	r.convs.push(conv, c.ID)
	d.Capability, d.Model = c.ID, model
	return d
}

// withModel sets d.Model for d's capability; a capability that no longer
// fits any model (the models changed) is refused for this message.
func (r *Router) withModel(d Decision) Decision {
	c := r.byID(d.Capability)
	if c == nil {
		return d
	}
	model, err := ChooseModel(c.ID, c.LLM, r.opts.Models)
	if err != nil {
		return Decision{Capability: d.Capability, Reason: ReasonNoModel, Reply: r.refusal(c, err)}
	}
	d.Model = model
	return d
}

func (r *Router) refuse(conv string, c *compiled, err error) Decision {
	return Decision{Capability: r.convs.top(conv), Reason: ReasonNoModel, Reply: r.refusal(c, err)}
}

func (r *Router) refusal(c *compiled, err error) string {
	var me *ModelError
	if errors.As(err, &me) {
		return fmt.Sprintf("%s cannot run here: its llm_requirements fit no configured model (%s).", r.label(c.ID), strings.Join(me.Reasons, "; "))
	}
	return fmt.Sprintf("%s cannot run here: %v.", r.label(c.ID), err)
}

func (r *Router) byID(id string) *compiled {
	for i := range r.installed {
		if r.installed[i].ID == id {
			return &r.installed[i]
		}
	}
	return nil
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
