package relay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip86"
)

// nip86Methods are the methods the relay answers; the last three are
// agentnode extensions (docs/RELAY.md#management).
var nip86Methods = []string{"supportedmethods",
	"banpubkey", "listbannedpubkeys", "allowpubkey", "listallowedpubkeys",
	"banevent", "allowevent", "listbannedevents",
	"allowkind", "disallowkind", "listallowedkinds", "listdisallowedkinds",
	"unlistpubkey", "unlistkind", "deleteevents"}

// callNIP86 runs one management call.
func (r *Relay) callNIP86(ctx context.Context, call nip86.Request) nip86.Response {
	res, err := r.nip86Result(ctx, call)
	if err != nil {
		return nip86.Response{Error: err.Error()}
	}
	return nip86.Response{Result: res}
}

func (r *Relay) nip86Result(ctx context.Context, call nip86.Request) (any, error) {
	switch call.Method { // the extensions, which go-nostr does not decode
	case "unlistpubkey":
		return r.unlistPubkey(call.Params)
	case "unlistkind":
		return r.unlistKind(call.Params)
	case "deleteevents":
		return r.deleteByFilter(ctx, call.Params)
	}
	mp, err := nip86.DecodeRequest(call)
	if err != nil {
		return nil, fmt.Errorf("invalid: %v", err)
	}
	switch m := mp.(type) {
	case nip86.SupportedMethods:
		return nip86Methods, nil
	case nip86.BanPubKey, nip86.AllowPubKey, nip86.ListBannedPubKeys, nip86.ListAllowedPubKeys:
		return r.pubkeyMethod(m)
	case nip86.BanEvent:
		return r.banEvent(ctx, m.ID, m.Reason)
	case nip86.AllowEvent, nip86.ListBannedEvents:
		return r.eventMethod(m)
	case nip86.AllowKind, nip86.DisallowKind, nip86.ListAllowedKinds, nip86.ListDisallowedKinds:
		return r.kindMethod(m)
	}
	return nil, fmt.Errorf("unsupported: method %q is not supported by this relay (see supportedmethods)", call.Method)
}

// pubkeyMethod runs the pubkey list methods: a ban takes the pubkey off
// the allowlist and an allow off the ban list.
func (r *Relay) pubkeyMethod(mp nip86.MethodParams) (any, error) {
	l := r.manage.lists
	switch m := mp.(type) {
	case nip86.BanPubKey:
		return true, l.update(func(st *listState) error {
			delete(st.AllowedPubkeys, m.PubKey)
			return put(st.BannedPubkeys, m.PubKey, m.Reason)
		})
	case nip86.AllowPubKey:
		return true, l.update(func(st *listState) error {
			delete(st.BannedPubkeys, m.PubKey)
			return put(st.AllowedPubkeys, m.PubKey, m.Reason)
		})
	case nip86.ListBannedPubKeys:
		return pubkeyReasons(l, func(st *listState) map[string]string { return st.BannedPubkeys }), nil
	default: // nip86.ListAllowedPubKeys
		return pubkeyReasons(l, func(st *listState) map[string]string { return st.AllowedPubkeys }), nil
	}
}

func pubkeyReasons(l *lists, pick func(*listState) map[string]string) []nip86.PubKeyReason {
	l.mu.RLock()
	defer l.mu.RUnlock()
	m := pick(&l.st)
	out := make([]nip86.PubKeyReason, 0, len(m))
	for _, pk := range slices.Sorted(maps.Keys(m)) {
		out = append(out, nip86.PubKeyReason{PubKey: pk, Reason: m[pk]})
	}
	return out
}

// banEvent bans id (it is refused from now on) and deletes it if stored.
func (r *Relay) banEvent(ctx context.Context, id, reason string) (any, error) {
	if err := r.manage.lists.update(func(st *listState) error { return put(st.BannedEvents, id, reason) }); err != nil {
		return nil, err
	}
	evts, err := r.store.querySync(ctx, nostr.Filter{IDs: []string{id}, Limit: 1})
	if err != nil {
		return nil, fmt.Errorf("error: banned, but the stored event could not be read")
	}
	for _, evt := range evts {
		if err := r.store.delete(ctx, evt); err != nil {
			return nil, fmt.Errorf("error: banned, but the stored event could not be deleted")
		}
	}
	return true, nil
}

// eventMethod: allowevent lifts a ban; listbannedevents lists them.
func (r *Relay) eventMethod(mp nip86.MethodParams) (any, error) {
	l := r.manage.lists
	if m, ok := mp.(nip86.AllowEvent); ok {
		return true, l.update(func(st *listState) error { delete(st.BannedEvents, m.ID); return nil })
	}
	l.mu.RLock()
	defer l.mu.RUnlock()
	out := make([]nip86.IDReason, 0, len(l.st.BannedEvents))
	for _, id := range slices.Sorted(maps.Keys(l.st.BannedEvents)) {
		out = append(out, nip86.IDReason{ID: id, Reason: l.st.BannedEvents[id]})
	}
	return out, nil
}

// kindMethod runs the kind list methods. listallowedkinds answers the
// kinds in force: the operator's, and AgentNetworkKinds when the relay
// stores only those.
func (r *Relay) kindMethod(mp nip86.MethodParams) (any, error) {
	l := r.manage.lists
	switch m := mp.(type) {
	case nip86.AllowKind:
		if err := validKind(m.Kind); err != nil {
			return nil, fmt.Errorf("invalid: %v", err)
		}
		return true, l.update(func(st *listState) error {
			dropKind(&st.DisallowedKinds, m.Kind)
			return addKind(&st.AllowedKinds, m.Kind)
		})
	case nip86.DisallowKind:
		if err := validKind(m.Kind); err != nil {
			return nil, fmt.Errorf("invalid: %v", err)
		}
		return true, l.update(func(st *listState) error {
			dropKind(&st.AllowedKinds, m.Kind)
			return addKind(&st.DisallowedKinds, m.Kind)
		})
	case nip86.ListDisallowedKinds:
		l.mu.RLock()
		defer l.mu.RUnlock()
		return append([]int{}, l.st.DisallowedKinds...), nil
	}
	return r.allowedKinds(), nil
}

// allowedKinds are the kinds stored when the list is in force (empty: any
// kind not disallowed).
func (r *Relay) allowedKinds() []int {
	r.manage.mu.RLock()
	agentOnly := r.manage.agentKindsOnly
	r.manage.mu.RUnlock()
	l := r.manage.lists
	l.mu.RLock()
	out := append([]int{}, l.st.AllowedKinds...)
	l.mu.RUnlock()
	if agentOnly {
		out = append(out, AgentNetworkKinds...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// unlistPubkey takes a pubkey off both lists: ["<hex pubkey>"].
func (r *Relay) unlistPubkey(params []any) (any, error) {
	pk, ok := firstParam[string](params)
	if !ok || !nostr.IsValidPublicKey(pk) {
		return nil, errors.New("invalid: unlistpubkey takes [\"<64-hex pubkey>\"]")
	}
	return true, r.manage.lists.update(func(st *listState) error {
		delete(st.BannedPubkeys, pk)
		delete(st.AllowedPubkeys, pk)
		return nil
	})
}

// unlistKind takes a kind off both lists: [kind].
func (r *Relay) unlistKind(params []any) (any, error) {
	f, ok := firstParam[float64](params)
	if !ok || math.Trunc(f) != f || validKind(int(f)) != nil {
		return nil, errors.New("invalid: unlistkind takes [kind], a kind from 0 to 65535")
	}
	return true, r.manage.lists.update(func(st *listState) error {
		dropKind(&st.AllowedKinds, int(f))
		dropKind(&st.DisallowedKinds, int(f))
		return nil
	})
}

// firstParam is params[0] as a T.
func firstParam[T any](params []any) (T, bool) {
	var zero T
	if len(params) == 0 {
		return zero, false
	}
	v, ok := params[0].(T)
	return v, ok
}

// parseFilter reads a NIP-01 filter out of a decoded JSON param.
func parseFilter(param any) (nostr.Filter, error) {
	var f nostr.Filter
	b, err := json.Marshal(param)
	if err == nil {
		err = json.Unmarshal(b, &f)
	}
	if err != nil {
		return f, errors.New("invalid: deleteevents takes [filter], a NIP-01 filter object")
	}
	return f, nil
}
