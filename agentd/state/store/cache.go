package store

import "container/list"

// lru keeps the CRDTs of recently used documents. It is guarded by
// Store.mu.
type lru struct {
	cap   int
	order *list.List // front = most recent; values are *docState
	byKey map[string]*list.Element
}

func newLRU(capacity int) *lru {
	return &lru{cap: capacity, order: list.New(), byKey: map[string]*list.Element{}}
}

func (c *lru) get(key string) (*docState, bool) {
	el, ok := c.byKey[key]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(el)
	return el.Value.(*docState), true
}

func (c *lru) put(st *docState) {
	if el, ok := c.byKey[st.key]; ok {
		el.Value = st
		c.order.MoveToFront(el)
		return
	}
	c.byKey[st.key] = c.order.PushFront(st)
	for c.order.Len() > c.cap {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.byKey, last.Value.(*docState).key)
	}
}

func (c *lru) drop(key string) {
	if el, ok := c.byKey[key]; ok {
		c.order.Remove(el)
		delete(c.byKey, key)
	}
}
