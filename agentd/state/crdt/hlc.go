package crdt

import (
	"cmp"
	"math"
	"strings"
	"sync"
	"time"
)

// ReplicaID names one writer of a CRDT: an agent instance, a device, a node.
// Two writers must never share a ReplicaID.
type ReplicaID string

// Timestamp is a hybrid logical clock reading: wall-clock milliseconds, a
// logical counter for events within the same millisecond (or while the wall
// clock lags a remote one), and the replica that took it. Timestamps are
// totally ordered by (Wall, Logical, Replica).
type Timestamp struct {
	Wall    int64     `json:"wall"`
	Logical uint32    `json:"logical"`
	Replica ReplicaID `json:"replica"`
}

// Compare returns -1, 0 or +1 as t is before, equal to or after u.
func (t Timestamp) Compare(u Timestamp) int {
	if c := cmp.Compare(t.Wall, u.Wall); c != 0 {
		return c
	}
	if c := cmp.Compare(t.Logical, u.Logical); c != 0 {
		return c
	}
	return strings.Compare(string(t.Replica), string(u.Replica))
}

// IsZero reports whether t is the zero Timestamp.
func (t Timestamp) IsZero() bool { return t == Timestamp{} }

// Time returns the wall-clock part of t.
func (t Timestamp) Time() time.Time { return time.UnixMilli(t.Wall) }

// HLC is a hybrid logical clock for one replica. It also hands out op
// counters: a Lamport counter that every op of the replica draws from, so an
// OpID (replica, counter) is unique and a counter is greater than the counter
// of every op the replica had seen when it made the op.
//
// An HLC is safe for concurrent use; several CRDTs of one replica share one.
type HLC struct {
	mu      sync.Mutex
	replica ReplicaID
	wall    func() time.Time
	last    Timestamp
	counter uint64
}

// NewHLC returns a clock for replica. wall is the physical clock; nil means
// time.Now. Tests inject a fake.
func NewHLC(replica ReplicaID, wall func() time.Time) *HLC {
	if wall == nil {
		wall = time.Now
	}
	return &HLC{replica: replica, wall: wall, last: Timestamp{Replica: replica}}
}

// Replica returns the replica this clock stamps for.
func (c *HLC) Replica() ReplicaID { return c.replica }

// Now returns a timestamp greater than every timestamp this clock has
// returned or been updated with.
func (c *HLC) Now() Timestamp {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tick()
}

// Update merges a timestamp received from another replica and returns a new
// local timestamp greater than both it and every earlier local one.
func (c *HLC) Update(remote Timestamp) Timestamp {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.witness(remote)
	return c.tick()
}

// Counter returns the last op counter handed out or witnessed.
func (c *HLC) Counter() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.counter
}

// stamp witnesses what a CRDT has seen (its greatest timestamp and op
// counter), then reserves n consecutive op counters and returns the id of the
// first with a fresh timestamp.
func (c *HLC) stamp(n int, seenTS Timestamp, seenCounter uint64) (OpID, Timestamp) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.witness(seenTS)
	c.counter = max(c.counter, seenCounter)
	id := OpID{Replica: c.replica, Counter: c.counter + 1}
	c.counter += uint64(n)
	return id, c.tick()
}

// witness raises the clock's (wall, logical) to ts if ts is ahead.
func (c *HLC) witness(ts Timestamp) {
	if ts.Wall > c.last.Wall || ts.Wall == c.last.Wall && ts.Logical > c.last.Logical {
		c.last.Wall, c.last.Logical = ts.Wall, ts.Logical
	}
}

// tick advances the clock past its last reading.
func (c *HLC) tick() Timestamp {
	pt := c.wall().UnixMilli()
	switch {
	case pt > c.last.Wall:
		c.last.Wall, c.last.Logical = pt, 0
	case c.last.Logical == math.MaxUint32:
		c.last.Wall, c.last.Logical = c.last.Wall+1, 0
	default:
		c.last.Logical++
	}
	c.last.Replica = c.replica
	return c.last
}
