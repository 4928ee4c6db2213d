package agentd

import (
	"slices"
	"sync"

	"github.com/agentnode/agentnode/capabilities/llm"
	"github.com/agentnode/agentnode/capabilities/router"
)

// Bounds of the in-memory chat histories.
const (
	// historyTurns is how many earlier exchanges (user message and answer)
	// of a conversation the model sees.
	historyTurns = 10
	// maxConversations bounds the conversations remembered across agents;
	// past it the least recently used one is forgotten.
	maxConversations = 1024
)

// chatState holds each agent's router and each conversation's recent
// history. It is safe for concurrent use.
type chatState struct {
	mu      sync.Mutex
	routers map[string]*router.Router // by agent
	hist    map[string][]llm.Message  // by agent "\x00" conversation
	order   []string                  // hist keys, least recently used first
}

func newChatState() *chatState {
	return &chatState{routers: map[string]*router.Router{}, hist: map[string][]llm.Message{}}
}

func (c *chatState) router(agent string) *router.Router {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.routers[agent]
}

// setRouter stores r unless another caller stored one first; it returns
// the one kept.
func (c *chatState) setRouter(agent string, r *router.Router) *router.Router {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cur := c.routers[agent]; cur != nil {
		return cur
	}
	c.routers[agent] = r
	return r
}

func (c *chatState) dropRouter(agent string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.routers, agent)
}

// history returns a copy of the conversation's recent messages.
func (c *chatState) history(agent, conv string) []llm.Message {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.hist[agent+"\x00"+conv])
}

// remember appends one exchange, keeping the last historyTurns.
func (c *chatState) remember(agent, conv, user, answer string) {
	key := agent + "\x00" + conv
	c.mu.Lock()
	defer c.mu.Unlock()
	h := append(c.hist[key], llm.Message{Role: llm.RoleUser, Content: user}, llm.Message{Role: llm.RoleAssistant, Content: answer})
	if len(h) > 2*historyTurns {
		h = slices.Clone(h[len(h)-2*historyTurns:])
	}
	c.hist[key] = h
	c.order = append(slices.DeleteFunc(c.order, func(k string) bool { return k == key }), key)
	for len(c.order) > maxConversations {
		delete(c.hist, c.order[0])
		c.order = c.order[1:]
	}
}
