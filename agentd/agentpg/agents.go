package agentpg

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"

	"github.com/jackc/pgx/v5"

	"github.com/agentnode/agentnode/agentd"
)

// Agents is agentd.Records in the database: one row per agent, in install
// order.
type Agents struct{ db *DB }

var _ agentd.InstallRecords = (*Agents)(nil)

// Agents returns the installed-agent records.
func (db *DB) Agents() *Agents { return &Agents{db: db} }

// List returns every agent, in install order.
func (r *Agents) List(ctx context.Context) ([]agentd.Agent, error) {
	rows, err := r.db.pool.Query(ctx, `SELECT doc FROM agentpg_agents ORDER BY seq`)
	if err != nil {
		return nil, fmt.Errorf("agentpg: list agents: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (agentd.Agent, error) { return scanAgent(row) })
	if err != nil {
		return nil, fmt.Errorf("agentpg: list agents: %w", err)
	}
	return out, nil
}

func scanAgent(row pgx.Row) (agentd.Agent, error) {
	var doc []byte
	var a agentd.Agent
	if err := row.Scan(&doc); err != nil {
		return a, err
	}
	if err := json.Unmarshal(doc, &a); err != nil {
		return a, fmt.Errorf("agentpg: decode agent: %w", err)
	}
	if a.Nudges == nil {
		a.Nudges = []string{}
	}
	return a, nil
}

// Get returns the agent with pubkey (ErrUnknownAgent when there is none).
func (r *Agents) Get(ctx context.Context, pubkey string) (agentd.Agent, error) {
	a, err := scanAgent(r.db.pool.QueryRow(ctx, `SELECT doc FROM agentpg_agents WHERE pubkey = $1`, pubkey))
	if errors.Is(err, pgx.ErrNoRows) {
		return agentd.Agent{}, fmt.Errorf("%w: %s", agentd.ErrUnknownAgent, pubkey)
	}
	if err != nil {
		return agentd.Agent{}, fmt.Errorf("agentpg: get agent: %w", err)
	}
	return a, nil
}

// Put adds a, or replaces the agent with a's pubkey keeping its place.
func (r *Agents) Put(ctx context.Context, a agentd.Agent) error {
	if err := agentd.CheckAgent(a); err != nil {
		return err
	}
	doc, err := json.Marshal(a)
	if err != nil {
		return fmt.Errorf("agentpg: encode agent: %w", err)
	}
	err = pgx.BeginFunc(ctx, r.db.pool, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO agentpg_agents (pubkey, doc) VALUES ($1, $2)
			ON CONFLICT (pubkey) DO UPDATE SET doc = EXCLUDED.doc`, a.PubKey, doc)
		if err != nil {
			return err
		}
		return notify(ctx, tx, TopicAgents)
	})
	if err != nil {
		return fmt.Errorf("agentpg: put agent: %w", err)
	}
	return nil
}

// Remove drops the agent with pubkey.
func (r *Agents) Remove(ctx context.Context, pubkey string) error {
	err := pgx.BeginFunc(ctx, r.db.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM agentpg_agents WHERE pubkey = $1`, pubkey)
		if err != nil {
			return fmt.Errorf("agentpg: remove agent: %w", err)
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("%w: %s", agentd.ErrUnknownAgent, pubkey)
		}
		return notify(ctx, tx, TopicAgents)
	})
	return err
}

// installLockClass is the first key of the transaction-scoped advisory
// locks that serialise the installs of one identity (two int4 keys: a key
// space apart from the one-bigint locks of the migrations).
const installLockClass = 0x61676e69 // "agni"

// Install adds a unless an agent with its install identity (definition
// installed from or now run, owner, name: the daemon's idempotency key) is
// recorded, and then returns that one and false. The check and the insert
// are one transaction under an advisory lock on the identity, so two
// instances installing the same agent at once add it once.
func (r *Agents) Install(ctx context.Context, a agentd.Agent) (agentd.Agent, bool, error) {
	if err := agentd.CheckAgent(a); err != nil {
		return agentd.Agent{}, false, err
	}
	doc, err := json.Marshal(a)
	if err != nil {
		return agentd.Agent{}, false, fmt.Errorf("agentpg: encode agent: %w", err)
	}
	h := fnv.New32a()
	h.Write([]byte(a.InstalledFrom + "\x00" + a.Owner + "\x00" + a.Name))
	var existing agentd.Agent
	found := false
	err = pgx.BeginFunc(ctx, r.db.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1::int4, $2::int4)`, int32(installLockClass), int32(h.Sum32())); err != nil {
			return err
		}
		got, err := scanAgent(tx.QueryRow(ctx, `SELECT doc FROM agentpg_agents
			WHERE (doc->>'installed_from' = $1 OR doc->>'definition_id' = $1) AND doc->>'owner' = $2 AND doc->>'name' = $3
			ORDER BY seq LIMIT 1`, a.InstalledFrom, a.Owner, a.Name))
		switch {
		case err == nil:
			existing, found = got, true
			return nil
		case !errors.Is(err, pgx.ErrNoRows):
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO agentpg_agents (pubkey, doc) VALUES ($1, $2)`, a.PubKey, doc); err != nil {
			return err
		}
		return notify(ctx, tx, TopicAgents)
	})
	if err != nil {
		return agentd.Agent{}, false, fmt.Errorf("agentpg: install agent: %w", err)
	}
	if found {
		return existing, false, nil
	}
	return a, true, nil
}
