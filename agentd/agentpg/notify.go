package agentpg

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
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

// Listen calls fn with the topic of every change committed through any
// instance (this one's included), from its own connection, until ctx
// ends; then it returns nil. After every (re)connection it calls
// fn(TopicAll) first, as changes may have been missed. fn runs on Listen's
// goroutine; keep it short.
func (db *DB) Listen(ctx context.Context, fn func(topic string)) error {
	for {
		err := db.listenOnce(ctx, fn)
		if ctx.Err() != nil {
			return nil
		}
		_ = err // the connection broke: reconnect after a pause
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func (db *DB) listenOnce(ctx context.Context, fn func(string)) error {
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	pc := conn.Hijack() // a listening connection never goes back to the pool
	defer pc.Close(context.WithoutCancel(ctx))
	if _, err := pc.Exec(ctx, "LISTEN "+pgx.Identifier{Channel}.Sanitize()); err != nil {
		return fmt.Errorf("agentpg: listen: %w", err)
	}
	fn(TopicAll)
	for {
		n, err := pc.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		fn(n.Payload)
	}
}
