package agentpg

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentnode/agentnode/internal/backoff"
)

// Channel is the LISTEN/NOTIFY channel on which agentpg announces changes
// other instances cache: the payload is a Topic.
const Channel = "agentpg_changes"

// Topics of Channel, and TopicAll, which Listen reports after (re)connecting:
// changes may have been missed, reload everything.
const (
	TopicAgents  = "agents"  // installed agents changed: agentd.Daemon.Reload
	TopicRevoked = "revoked" // consent revocations changed: consent.Consent.Reload
	TopicTasks   = "tasks"   // a task changed: tasks.Store.Wake
	TopicConsent = "consent" // an approval was decided: consent.Consent.Wake
	// TopicRegistrations: directory registrations or claims changed:
	// directory.Directory.ReloadRegistrations.
	TopicRegistrations = "registrations"
	TopicAll           = "*"
)

// notify announces topic after the caller's transaction tx commits.
func notify(ctx context.Context, tx pgx.Tx, topic string) error {
	_, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, Channel, topic)
	return err
}

// listenRetry spaces Listen's reconnections (internal/backoff, the one
// schedule): a quarter second after a connection that was listening, up to
// 30 s while the database stays away.
var listenRetry = backoff.Backoff{Min: 250 * time.Millisecond, Max: 30 * time.Second}

// Listen calls fn with the topic of every change committed through any
// instance (this one's included), from its own connection, until ctx
// ends; then it returns nil. After every (re)connection it calls
// fn(TopicAll) first, as changes may have been missed. fn runs on Listen's
// goroutine; keep it short. A broken connection is reconnected on
// listenRetry's schedule.
func (db *DB) Listen(ctx context.Context, fn func(topic string)) error {
	listenRetry.Loop(ctx, func(ctx context.Context) (bool, error) {
		return db.listenOnce(ctx, fn)
	}, nil)
	return nil
}

// listenOnce listens on one connection until it breaks or ctx ends;
// listening reports whether LISTEN took (the session counts as healthy).
func (db *DB) listenOnce(ctx context.Context, fn func(string)) (listening bool, err error) {
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return false, err
	}
	pc := conn.Hijack() // a listening connection never goes back to the pool
	defer pc.Close(context.WithoutCancel(ctx))
	if _, err := pc.Exec(ctx, "LISTEN "+pgx.Identifier{Channel}.Sanitize()); err != nil {
		return false, fmt.Errorf("agentpg: listen: %w", err)
	}
	fn(TopicAll)
	for {
		n, err := pc.WaitForNotification(ctx)
		if err != nil {
			return true, err
		}
		fn(n.Payload)
	}
}
