package state

import (
	"encoding/json"

	"github.com/agentnode/agentnode/agentd/state/store"
)

// Document is a state object as the tools return it.
type Document struct {
	Schema     string          `json:"schema_uri"`
	ID         string          `json:"id"`
	Scope      string          `json:"scope"`
	Owner      string          `json:"owner"`
	Agent      string          `json:"agent"`
	Visibility string          `json:"visibility"`
	CreatedAt  int64           `json:"created_at"` // unix ms
	UpdatedAt  int64           `json:"updated_at"` // unix ms
	Deleted    bool            `json:"deleted,omitempty"`
	Size       int64           `json:"size"`
	Object     json.RawMessage `json:"object"`
	// Incomplete is set when this replica knows it lacks part of the
	// document's causal history (why, in words): Object is partial until
	// replication catches up. Filled by Get.
	Incomplete string `json:"incomplete,omitempty"`
	// Concurrent holds every concurrent value of each mv_register field
	// that has more than one (Object shows the last). Filled by Get.
	Concurrent map[string][]json.RawMessage `json:"concurrent,omitempty"`
}

func fromStore(d *store.Doc) *Document {
	return &Document{Schema: d.Schema, ID: d.ID, Scope: d.Scope, Owner: d.Owner, Agent: d.Agent,
		Visibility: d.Visibility, CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt, Deleted: d.Deleted,
		Size: d.Size, Object: d.Value}
}

// QueryResult is one page of a state.query.
type QueryResult struct {
	Rows       []map[string]any `json:"rows"`
	NextCursor string           `json:"next_cursor,omitempty"`
	// Concurrent maps a row's document id to the concurrent values of each
	// returned mv_register field that holds several (the row shows the
	// last, the winner); rows without any are absent.
	Concurrent map[string]map[string][]json.RawMessage `json:"concurrent,omitempty"`
}
