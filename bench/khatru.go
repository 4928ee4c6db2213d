package bench

import (
	"context"
	"fmt"
	"io"
	"log"
	"sync/atomic"
	"time"

	"github.com/fiatjaf/eventstore/lmdb"
	"github.com/fiatjaf/khatru"
	"github.com/nbd-wtf/go-nostr"
)

// plainKhatru is the baseline: khatru with eventstore/lmdb wired the way
// khatru's README does it, and nothing else. It counts its websocket
// connections so that Close can wait for them.
type plainKhatru struct {
	*khatru.Relay
	db    *lmdb.LMDBBackend
	conns atomic.Int64
}

var _ relayUnderTest = (*plainKhatru)(nil)

func openPlainKhatru(_ context.Context, dir string) (relayUnderTest, error) {
	db := &lmdb.LMDBBackend{Path: dir}
	if err := db.Init(); err != nil {
		return nil, err
	}
	p := &plainKhatru{Relay: khatru.NewRelay(), db: db}
	p.Log = log.New(io.Discard, "", 0)
	p.StoreEvent = append(p.StoreEvent, db.SaveEvent)
	p.QueryEvents = append(p.QueryEvents, db.QueryEvents)
	p.DeleteEvent = append(p.DeleteEvent, db.DeleteEvent)
	p.ReplaceEvent = append(p.ReplaceEvent, db.ReplaceEvent)
	p.OnConnect = append(p.OnConnect, func(context.Context) { p.conns.Add(1) })
	p.OnDisconnect = append(p.OnDisconnect, func(context.Context) { p.conns.Add(-1) })
	return p, nil
}

// Load saves evt straight into LMDB (no signature check: the events are
// generated and signed by the benchmark).
func (p *plainKhatru) Load(ctx context.Context, evt *nostr.Event) error {
	return p.db.SaveEvent(ctx, evt)
}

// Close waits (until ctx ends) for the websocket clients to disconnect,
// then closes LMDB. If clients remain, LMDB is left open: closing it under
// a running query would crash the process.
func (p *plainKhatru) Close(ctx context.Context) error {
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for p.conns.Load() > 0 {
		select {
		case <-ctx.Done():
			return fmt.Errorf("close %s: %d clients still connected, LMDB left open: %w", NameKhatru, p.conns.Load(), ctx.Err())
		case <-tick.C:
		}
	}
	p.db.Close()
	return nil
}
