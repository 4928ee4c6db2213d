package khatru

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fiatjaf/eventstore"
	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip77"
	"github.com/nbd-wtf/go-nostr/nip77/negentropy"
	"github.com/nbd-wtf/go-nostr/nip77/negentropy/storage/vector"
)

// PATCH (agentnode): NIP-77 sessions are bounded (PATCHES.md, item 12).
// Upstream let a connection open any number of sessions, each holding
// every event its filter matched, kept them after the connection ended
// and reconciled one session from several goroutines at once.

// NegentropyLimits bound the relay's NIP-77 sessions. Zero fields take
// DefaultNegentropyLimits. The tags are agentnode serve's --config keys
// (relay.Limits says how they read).
type NegentropyLimits struct {
	MaxSessions  int           `json:"negentropy_max_sessions" min:"0"`          // open sessions per connection; a NEG-OPEN beyond gets NEG-ERR "blocked:"
	MaxItems     int           `json:"negentropy_max_items" min:"0"`             // events one session may hold; a filter matching more gets NEG-ERR "blocked:"
	MaxHeldItems int           `json:"negentropy_max_held_items" min:"0"`        // events all sessions of the relay hold together; beyond: NEG-ERR "rate-limited:"
	FrameSize    int           `json:"negentropy_frame_bytes" min:"0"`           // largest NEG-MSG payload the relay sends, in bytes before hex encoding
	IdleTimeout  time.Duration `json:"negentropy_idle_seconds" unit:"s" min:"0"` // a session without a NEG-MSG for this long is closed
}

// DefaultNegentropyLimits are the bounds of a relay that sets none.
var DefaultNegentropyLimits = NegentropyLimits{
	MaxSessions:  2,
	MaxItems:     250_000,
	MaxHeldItems: 1_000_000,
	FrameSize:    128 * 1024,
	IdleTimeout:  30 * time.Second,
}

// ErrTooManyItems is what a NegentropyItems hook returns when more events
// than it may add match the filter.
var ErrTooManyItems = errors.New("too many events match")

// negentropyBook is the relay-wide account of open sessions.
type negentropyBook struct {
	mu   sync.Mutex
	held int // items reserved by sessions being built or open
}

// NegentropySession is one open NIP-77 session of a connection.
type NegentropySession struct {
	mu    sync.Mutex // Reconcile is not safe for concurrent use
	neg   *negentropy.Negentropy
	items int // items reserved in the relay's book
	idle  *time.Timer
	stop  func() bool // unregisters the end-of-connection cleanup
}

func (rl *Relay) negLimits() NegentropyLimits {
	l, d := rl.NegentropyLimits, DefaultNegentropyLimits
	l.MaxSessions = cmpOr(l.MaxSessions, d.MaxSessions)
	l.MaxItems = cmpOr(l.MaxItems, d.MaxItems)
	l.MaxHeldItems = max(cmpOr(l.MaxHeldItems, d.MaxHeldItems), l.MaxItems)
	l.FrameSize = max(cmpOr(l.FrameSize, d.FrameSize), 4096)
	if l.IdleTimeout <= 0 {
		l.IdleTimeout = d.IdleTimeout
	}
	return l
}

func cmpOr(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}

// handleNegOpen answers a NEG-OPEN: the filter passes the REQ checks, the
// session's items are read under the connection's query slot and the
// relay's item budget, and the first NEG-MSG is sent.
func (rl *Relay) handleNegOpen(ctx context.Context, ws *WebSocket, env *nip77.OpenEnvelope) {
	srl := rl
	if rl.getSubRelayFromFilter != nil {
		srl = rl.getSubRelayFromFilter(env.Filter)
	}
	if !srl.Negentropy {
		writeNegErr(ws, env.SubscriptionID, "blocked: this relay does not support NIP-77")
		return
	}
	rl.closeNegSession(ws, env.SubscriptionID) // NIP-77: a NEG-OPEN on an open id replaces it
	if reason := srl.openNegSession(ctx, ws, env); reason != "" {
		if strings.HasPrefix(reason, "auth-required:") {
			RequestAuth(ctx)
		}
		writeNegErr(ws, env.SubscriptionID, reason)
	}
}

// openNegSession builds, registers and starts a session; the reason it
// refused, NIP-01 prefixed, or "".
func (rl *Relay) openNegSession(ctx context.Context, ws *WebSocket, env *nip77.OpenEnvelope) string {
	lim := rl.negLimits()
	if reason := rl.rejectRequest(ctx, ws, "", nostr.Filters{env.Filter}); reason != "" {
		return reason
	}
	if ws.negSessions().Size() >= lim.MaxSessions {
		return "blocked: too many open negentropy sessions on this connection (max " +
			strconv.Itoa(lim.MaxSessions) + "); NEG-CLOSE some first"
	}
	want := lim.MaxItems
	if env.Filter.Limit > 0 && env.Filter.Limit < want {
		want = env.Filter.Limit
	}
	if !rl.reserveNegItems(want, lim.MaxHeldItems) {
		return "rate-limited: the relay is busy with other negentropy syncs; try again later"
	}
	if !ws.acquireQuery() {
		rl.releaseNegItems(want)
		return "error: connection closed"
	}
	vec, err := rl.startNegentropySession(ctx, env.Filter, want)
	ws.releaseQuery()
	if err != nil {
		rl.releaseNegItems(want)
		return err.Error()
	}
	rl.releaseNegItems(want - vec.Size())
	return rl.startNeg(ws, env, vec, lim)
}

// startNeg answers the client's first message and keeps the session.
func (rl *Relay) startNeg(ws *WebSocket, env *nip77.OpenEnvelope, vec *vector.Vector, lim NegentropyLimits) string {
	s := &NegentropySession{neg: negentropy.New(vec, lim.FrameSize), items: vec.Size()}
	out, err := s.neg.Reconcile(env.Message)
	if err != nil {
		rl.releaseNegItems(s.items)
		return "invalid: " + err.Error()
	}
	id := env.SubscriptionID
	s.idle = time.AfterFunc(lim.IdleTimeout, func() { rl.dropNegSession(ws, id, s) })
	s.stop = context.AfterFunc(ws.Context, func() { rl.dropNegSession(ws, id, s) })
	ws.negSessions().Store(id, s)
	ws.WriteJSON(nip77.MessageEnvelope{SubscriptionID: id, Message: out})
	return ""
}

// handleNegMsg answers a NEG-MSG of an open session.
func (rl *Relay) handleNegMsg(ctx context.Context, ws *WebSocket, env *nip77.MessageEnvelope) {
	id := env.SubscriptionID
	s, ok := ws.negSessions().Load(id)
	if !ok {
		writeNegErr(ws, id, "closed: no open negentropy session with this id (closed, timed out or never opened)")
		return
	}
	if reason := rl.rejectRequest(ctx, ws, "", nil); reason != "" {
		rl.dropNegSession(ws, id, s)
		writeNegErr(ws, id, reason)
		return
	}
	s.idle.Reset(rl.negLimits().IdleTimeout)
	s.mu.Lock()
	out, err := s.neg.Reconcile(env.Message)
	s.mu.Unlock()
	if err != nil {
		rl.dropNegSession(ws, id, s)
		writeNegErr(ws, id, "invalid: "+err.Error())
		return
	}
	ws.WriteJSON(nip77.MessageEnvelope{SubscriptionID: id, Message: out})
}

// closeNegSession ends ws's session id, if open (NEG-CLOSE).
func (rl *Relay) closeNegSession(ws *WebSocket, id string) {
	if s, ok := ws.negSessions().Load(id); ok {
		rl.dropNegSession(ws, id, s)
	}
}

// dropNegSession forgets s (if it is still ws's session id) and gives its
// items back; it runs on NEG-CLOSE, an error, the idle timeout or the end
// of the connection, whichever comes first.
func (rl *Relay) dropNegSession(ws *WebSocket, id string, s *NegentropySession) {
	dropped := false
	ws.negSessions().Compute(id, func(old *NegentropySession, loaded bool) (*NegentropySession, bool) {
		if loaded && old == s {
			dropped = true
			return nil, true
		}
		return old, !loaded
	})
	if !dropped {
		return
	}
	s.idle.Stop()
	s.stop()
	rl.releaseNegItems(s.items)
}

// NegentropyHeld is the number of items the relay's open NIP-77 sessions
// hold (or have reserved while they are being built).
func (rl *Relay) NegentropyHeld() int {
	rl.negBook.mu.Lock()
	defer rl.negBook.mu.Unlock()
	return rl.negBook.held
}

func (rl *Relay) reserveNegItems(n, ceiling int) bool {
	rl.negBook.mu.Lock()
	defer rl.negBook.mu.Unlock()
	if rl.negBook.held+n > ceiling {
		return false
	}
	rl.negBook.held += n
	return true
}

func (rl *Relay) releaseNegItems(n int) {
	rl.negBook.mu.Lock()
	rl.negBook.held -= n
	rl.negBook.mu.Unlock()
}

// startNegentropySession reads the items of a session: the filter goes
// through the same overwrite/reject flow as a REQ's (its limit is kept:
// a limit caps the session at the newest events instead of the REQ
// default), then NegentropyItems (or, without it, QueryEvents) adds at
// most maxItems events.
func (rl *Relay) startNegentropySession(ctx context.Context, filter nostr.Filter, maxItems int) (*vector.Vector, error) {
	ctx = eventstore.SetNegentropy(ctx)
	limit, limitZero := filter.Limit, filter.LimitZero
	for _, ovw := range rl.OverwriteFilter {
		ovw(ctx, &filter)
	}
	filter.Limit, filter.LimitZero = limit, limitZero
	if filter.LimitZero {
		return nil, fmt.Errorf("invalid: limit 0")
	}
	for _, reject := range rl.RejectFilter {
		if reject, msg := reject(ctx, filter); reject {
			return nil, errors.New(nostr.NormalizeOKMessage(msg, "blocked"))
		}
	}
	vec, err := rl.negItems(ctx, filter, maxItems)
	if errors.Is(err, ErrTooManyItems) {
		return nil, fmt.Errorf("blocked: more than %d events match this filter; narrow it (since/until, kinds, authors)", maxItems)
	} else if err != nil {
		return nil, errors.New(prefixedOr(err.Error(), "error: could not read the events"))
	}
	vec.Seal()
	return vec, nil
}

// negItems fills an unsealed vector from NegentropyItems or QueryEvents.
func (rl *Relay) negItems(ctx context.Context, filter nostr.Filter, maxItems int) (*vector.Vector, error) {
	vec := vector.New()
	if rl.NegentropyItems != nil {
		err := rl.NegentropyItems(ctx, filter, maxItems, vec.Insert)
		return vec, err
	}
	for _, query := range rl.QueryEvents {
		ch, err := query(ctx, filter)
		if err != nil || ch == nil {
			continue
		}
		for event := range ch {
			if vec.Size() >= maxItems {
				return vec, ErrTooManyItems
			}
			vec.Insert(event.CreatedAt, event.ID)
		}
	}
	return vec, nil
}

// prefixedOr is msg when it carries a NIP-01 prefix a client should see
// ("blocked:", "invalid:", "restricted:"), else def: internal error text
// is not shown to clients.
func prefixedOr(msg, def string) string {
	for _, p := range []string{"blocked: ", "invalid: ", "restricted: ", "rate-limited: "} {
		if strings.HasPrefix(msg, p) {
			return msg
		}
	}
	return def
}

// writeNegErr sends ["NEG-ERR", id, reason] as NIP-77 spells it (go-nostr's
// ErrorEnvelope encodes the label as "NEG-ERROR", which clients such as
// strfry and go-nostr's own parser do not recognise).
func writeNegErr(ws *WebSocket, id, reason string) {
	ws.WriteJSON([]string{"NEG-ERR", id, reason})
}
