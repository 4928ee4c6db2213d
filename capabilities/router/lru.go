package router

import (
	"container/list"
	"slices"
	"time"
)

// lru keeps the stacks of at most max conversations, the least recently
// used evicted first. A conversation whose stack empties is dropped. Not
// safe for concurrent use: Router locks around it.
type lru struct {
	max   int
	order *list.List // front = most recent; values are *convStack
	byID  map[string]*list.Element
}

type convStack struct {
	conv  string
	stack []string  // bottom first
	last  time.Time // when the conversation last routed a message
}

func newLRU(max int) *lru {
	return &lru{max: max, order: list.New(), byID: map[string]*list.Element{}}
}

func (l *lru) get(conv string) []string {
	if e, ok := l.byID[conv]; ok {
		l.order.MoveToFront(e)
		return e.Value.(*convStack).stack
	}
	return nil
}

func (l *lru) top(conv string) string {
	st := l.get(conv)
	if len(st) == 0 {
		return ""
	}
	return st[len(st)-1]
}

// push puts id on top; if id is already on the stack it moves to the top.
func (l *lru) push(conv, id string) {
	e, ok := l.byID[conv]
	if !ok {
		e = l.order.PushFront(&convStack{conv: conv})
		l.byID[conv] = e
		l.evict()
	}
	l.order.MoveToFront(e)
	cs := e.Value.(*convStack)
	cs.stack = append(slices.DeleteFunc(cs.stack, func(s string) bool { return s == id }), id)
	if len(cs.stack) > MaxDepth {
		cs.stack = cs.stack[len(cs.stack)-MaxDepth:]
	}
}

// last is when conv last routed a message (zero: no stack).
func (l *lru) last(conv string) time.Time {
	if e, ok := l.byID[conv]; ok {
		return e.Value.(*convStack).last
	}
	return time.Time{}
}

// touch records now as conv's last message, if it has a stack.
func (l *lru) touch(conv string, now time.Time) {
	if e, ok := l.byID[conv]; ok {
		e.Value.(*convStack).last = now
	}
}

func (l *lru) pop(conv string) string {
	e, ok := l.byID[conv]
	if !ok {
		return ""
	}
	cs := e.Value.(*convStack)
	top := cs.stack[len(cs.stack)-1]
	cs.stack = cs.stack[:len(cs.stack)-1]
	if len(cs.stack) == 0 {
		l.remove(e)
	}
	return top
}

// filter keeps only the ids keep accepts, in every stack.
func (l *lru) filter(keep func(id string) bool) {
	for e := l.order.Front(); e != nil; {
		next := e.Next()
		cs := e.Value.(*convStack)
		cs.stack = slices.DeleteFunc(cs.stack, func(s string) bool { return !keep(s) })
		if len(cs.stack) == 0 {
			l.remove(e)
		}
		e = next
	}
}

func (l *lru) evict() {
	for l.order.Len() > l.max {
		l.remove(l.order.Back())
	}
}

func (l *lru) remove(e *list.Element) {
	delete(l.byID, e.Value.(*convStack).conv)
	l.order.Remove(e)
}
