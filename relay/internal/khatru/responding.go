package khatru

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip45/hyperloglog"
)

func (rl *Relay) handleCountRequest(ctx context.Context, ws *WebSocket, filter nostr.Filter) int64 {
	// check if we'll reject this filter
	for _, reject := range rl.RejectCountFilter {
		if rejecting, msg := reject(ctx, filter); rejecting {
			ws.WriteJSON(nostr.NoticeEnvelope(msg))
			return 0
		}
	}

	// run the functions to count (generally it will be just one)
	var subtotal int64 = 0
	for _, count := range rl.CountEvents {
		res, err := count(ctx, filter)
		if err != nil {
			ws.WriteJSON(nostr.NoticeEnvelope(err.Error()))
		}
		subtotal += res
	}

	return subtotal
}

func (rl *Relay) handleCountRequestWithHLL(
	ctx context.Context,
	ws *WebSocket,
	filter nostr.Filter,
	offset int,
) (int64, *hyperloglog.HyperLogLog) {
	// check if we'll reject this filter
	for _, reject := range rl.RejectCountFilter {
		if rejecting, msg := reject(ctx, filter); rejecting {
			ws.WriteJSON(nostr.NoticeEnvelope(msg))
			return 0, nil
		}
	}

	// run the functions to count (generally it will be just one)
	var subtotal int64 = 0
	var hll *hyperloglog.HyperLogLog
	for _, countHLL := range rl.CountEventsHLL {
		res, fhll, err := countHLL(ctx, filter, offset)
		if err != nil {
			ws.WriteJSON(nostr.NoticeEnvelope(err.Error()))
		}
		subtotal += res
		if fhll != nil {
			if hll == nil {
				hll = fhll
			} else {
				hll.Merge(fhll)
			}
		}
	}

	return subtotal, hll
}

// errStoredEventsSent ends a REQ's query context once EOSE is due.
var errStoredEventsSent = errors.New("stored events sent")

// errQueryFailed ends a REQ whose query failed: it got CLOSED, not EOSE.
var errQueryFailed = errors.New("query failed")

// PATCH (agentnode): a REQ is checked whole before any of its filters is
// subscribed, so that a REQ answered with CLOSED leaves no live listener
// behind (upstream added the listeners of the filters before the rejected
// one); a REQ reusing an open subscription id replaces it (NIP-01; upstream
// added the new filters beside the old ones); the number of open
// subscriptions per connection is bounded; the stored-events phase holds
// one of the connection's query slots.
// PATCH (agentnode): a REQ is handled in two steps (PATCHES.md 19).
// registerReq runs in the connection's reader, in the order the messages
// came: the REQ is checked and its listeners are in place before the
// reader takes the connection's next message. A client that subscribes
// and then publishes a request on the same connection (ContextVM, NIP-46,
// kind 25910: ephemeral answers, never stored) so gets the answer; when
// the whole REQ ran in its own goroutine, the EVENT sent after it could
// be broadcast, answered and the answer broadcast before the listener
// existed, and the answer was lost. runReq, in a goroutine, then sends the
// stored events and EOSE.
type registeredReq struct {
	ctx      context.Context
	cancel   context.CancelCauseFunc
	prepared []nostr.Filter
}

// registerReq checks env and adds its listeners; ok false: refused (the
// CLOSED is sent).
func (rl *Relay) registerReq(ctx context.Context, ws *WebSocket, env *nostr.ReqEnvelope) (registeredReq, bool) {
	id := env.SubscriptionID
	if reason := rl.rejectRequest(ctx, ws, id, env.Filters); reason != "" {
		rl.closeSubscription(ctx, ws, id, reason)
		return registeredReq{}, false
	}
	reqCtx, cancelReqCtx := context.WithCancelCause(ctx)
	reqCtx = context.WithValue(reqCtx, subscriptionIdKey, id)
	prepared := make([]nostr.Filter, len(env.Filters))
	for i, filter := range env.Filters {
		srl := rl.subRelayFor(filter)
		f, err := srl.prepareFilter(reqCtx, filter)
		if err != nil {
			cancelReqCtx(errors.New("filter rejected"))
			rl.closeSubscription(ctx, ws, id, err.Error())
			return registeredReq{}, false
		}
		prepared[i] = f
	}
	rl.removeListenerId(ws, id)
	for _, filter := range env.Filters {
		rl.addListener(ws, id, rl.subRelayFor(filter), filter, cancelReqCtx)
	}
	return registeredReq{ctx: reqCtx, cancel: cancelReqCtx, prepared: prepared}, true
}

// runReq sends the stored events of a registered REQ, then EOSE.
func (rl *Relay) runReq(ctx context.Context, ws *WebSocket, env *nostr.ReqEnvelope, reg registeredReq) {
	id := env.SubscriptionID
	reqCtx, cancelReqCtx, prepared := reg.ctx, reg.cancel, reg.prepared
	if !ws.acquireQuery() {
		cancelReqCtx(context.Canceled)
		return
	}
	eose := sync.WaitGroup{}
	started := time.Now() // PATCH (agentnode): OnEOSE times REQ -> EOSE
	var failOnce sync.Once
	fail := func(reason string) {
		failOnce.Do(func() {
			cancelReqCtx(errQueryFailed) // first: the cause that stops EOSE
			rl.closeSubscription(ctx, ws, id, reason)
		})
	}
	for i, filter := range prepared {
		rl.subRelayFor(env.Filters[i]).runQueries(reqCtx, id, &eose, ws, filter, fail)
		if reqCtx.Err() != nil {
			break
		}
	}
	go func() {
		eose.Wait()
		ws.releaseQuery()
		cause := context.Cause(reqCtx)
		ended := cause == ErrSubscriptionClosedByClient || cause == errQueryFailed
		cancelReqCtx(errStoredEventsSent) // the stored-events phase is over; listeners stay
		if !ended {
			ws.WriteJSON(nostr.EOSEEnvelope(id))
			for _, done := range rl.OnEOSE {
				done(time.Since(started))
			}
		}
	}()
}

// closeSubscription answers CLOSED and drops whatever was open under id.
func (rl *Relay) closeSubscription(ctx context.Context, ws *WebSocket, id, reason string) {
	if strings.HasPrefix(reason, "auth-required:") {
		RequestAuth(ctx)
	}
	rl.removeListenerId(ws, id)
	ws.WriteJSON(nostr.ClosedEnvelope{SubscriptionID: id, Reason: reason})
}

func (rl *Relay) subRelayFor(filter nostr.Filter) *Relay {
	if rl.getSubRelayFromFilter != nil {
		return rl.getSubRelayFromFilter(filter)
	}
	return rl
}

// rejectRequest applies the subscription bound and the RejectRequest
// hooks; id is "" for COUNT.
func (rl *Relay) rejectRequest(ctx context.Context, ws *WebSocket, id string, filters nostr.Filters) string {
	if id != "" && rl.MaxSubscriptions > 0 && rl.openSubscriptions(ws, id) >= rl.MaxSubscriptions {
		return "rate-limited: too many open subscriptions on this connection (max " +
			strconv.Itoa(rl.MaxSubscriptions) + "); CLOSE some first"
	}
	for _, reject := range rl.RejectRequest {
		if rejecting, msg := reject(ctx, filters); rejecting {
			return nostr.NormalizeOKMessage(msg, "blocked")
		}
	}
	return ""
}

// openSubscriptions counts ws's open subscription ids other than except.
func (rl *Relay) openSubscriptions(ws *WebSocket, except string) int {
	rl.clientsMutex.Lock()
	defer rl.clientsMutex.Unlock()
	seen := map[string]struct{}{}
	for _, spec := range rl.clients[ws] {
		if spec.id != except {
			seen[spec.id] = struct{}{}
		}
	}
	return len(seen)
}

// prepareFilter overwrites and checks one filter of a REQ (upstream's
// handleRequest did both just before querying).
func (rl *Relay) prepareFilter(ctx context.Context, filter nostr.Filter) (nostr.Filter, error) {
	for _, ovw := range rl.OverwriteFilter {
		ovw(ctx, &filter)
	}
	if filter.LimitZero {
		return filter, nil
	}
	for _, reject := range rl.RejectFilter {
		if reject, msg := reject(ctx, filter); reject {
			return filter, errors.New(nostr.NormalizeOKMessage(msg, "blocked"))
		}
	}
	return filter, nil
}

// runQueries sends the stored events matching a prepared filter. PATCH
// (agentnode): a query that fails (before its channel or, streamed, with
// FailQuery before closing it) ends the subscription with fail (CLOSED
// with its reason), not a NOTICE followed by EOSE.
func (rl *Relay) runQueries(ctx context.Context, id string, eose *sync.WaitGroup, ws *WebSocket, filter nostr.Filter, fail func(reason string)) {
	if filter.LimitZero {
		return
	}
	for _, query := range rl.QueryEvents {
		qctx, enc := withEncodedResults(ctx)
		ch, err := query(qctx, filter)
		if err != nil {
			if ctx.Err() == nil { // else the REQ was closed or is over
				fail(nostr.NormalizeOKMessage(err.Error(), "error"))
			}
			return
		} else if ch == nil {
			continue
		}
		eose.Add(1)
		go func(ch chan *nostr.Event) {
			defer eose.Done()
			prefix := eventFramePrefix(id)
			for event := range ch {
				body := enc.take(event, len(rl.OverwriteResponseEvent) == 0)
				for _, ovw := range rl.OverwriteResponseEvent {
					ovw(ctx, event)
				}
				if ctx.Err() == nil {
					ws.writeStoredEvent(ctx, prefix, event, body)
				}
			}
			if err := enc.failed(); err != nil && ctx.Err() == nil {
				fail(nostr.NormalizeOKMessage(err.Error(), "error"))
			}
		}(ch)
	}
}

// PATCH (agentnode): a QueryEvents hook that already holds the JSON of the
// events it returns (the relay's store builds it straight from the stored
// record) hands it over with SetEncoded, and the EVENT frames are written
// from those bytes instead of encoding each event again. The frame prefix
// is built once per query, not once per event. A hook may stream its
// answer (send on its channel after it returned): SetEncoded is then
// called while runQueries reads, so the table is locked, and each entry
// is taken out when its event is written (the table holds only the events
// not yet written).

// encodedResults maps a query's events to their JSON, and holds the error
// that cut a streamed answer short (FailQuery).
type encodedResults struct {
	mu  sync.Mutex
	m   map[*nostr.Event][]byte
	err error
}

type encodedResultsKey struct{}

// withEncodedResults gives a query's context a table for SetEncoded.
func withEncodedResults(ctx context.Context) (context.Context, *encodedResults) {
	enc := &encodedResults{}
	return context.WithValue(ctx, encodedResultsKey{}, enc), enc
}

// SetEncoded records json as the encoding of evt for the REQ whose
// QueryEvents hook got ctx; it reports whether anything takes it (false
// for internal queries and COUNT). Call it before evt is sent on the
// hook's channel; json must be evt's JSON object and must not change
// afterwards.
func SetEncoded(ctx context.Context, evt *nostr.Event, json []byte) bool {
	enc, _ := ctx.Value(encodedResultsKey{}).(*encodedResults)
	if enc == nil {
		return false
	}
	enc.mu.Lock()
	defer enc.mu.Unlock()
	if enc.m == nil {
		enc.m = make(map[*nostr.Event][]byte)
	}
	enc.m[evt] = json
	return true
}

// FailQuery records err as what cut short the answer a QueryEvents hook
// streams on its channel; call it before closing the channel. The REQ is
// then CLOSED with err's message (a NIP-01 prefixed reason) instead of
// getting EOSE. It reports whether anything takes it.
func FailQuery(ctx context.Context, err error) bool {
	enc, _ := ctx.Value(encodedResultsKey{}).(*encodedResults)
	if enc == nil {
		return false
	}
	enc.mu.Lock()
	defer enc.mu.Unlock()
	enc.err = err
	return true
}

// WantsEncoded reports whether SetEncoded on ctx is taken.
func WantsEncoded(ctx context.Context) bool {
	_, ok := ctx.Value(encodedResultsKey{}).(*encodedResults)
	return ok
}

// take removes and returns the recorded JSON of evt, or nil (encode it)
// when none was recorded or when the event may have been changed
// (trusted false).
func (enc *encodedResults) take(evt *nostr.Event, trusted bool) []byte {
	enc.mu.Lock()
	defer enc.mu.Unlock()
	body := enc.m[evt]
	delete(enc.m, evt)
	if !trusted {
		return nil
	}
	return body
}

// failed is the error FailQuery recorded, if any.
func (enc *encodedResults) failed() error {
	enc.mu.Lock()
	defer enc.mu.Unlock()
	return enc.err
}

// acquireQuery waits for one of the connection's query slots; false when
// the connection ended first.
func (ws *WebSocket) acquireQuery() bool {
	select {
	case ws.queries <- struct{}{}:
		return true
	case <-ws.Context.Done():
		return false
	}
}

func (ws *WebSocket) releaseQuery() { <-ws.queries }
