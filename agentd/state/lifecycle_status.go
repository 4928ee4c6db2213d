package state

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// lifecycleStatusKey is where the store keeps the LifecycleStatus.
const lifecycleStatusKey = "lifecycle:status"

// LifecycleStatus is what the lifecycle passes over a store did: the last
// pass and the sums since the first recorded one. Every pass records it in
// the store (serve's scheduled ones and `agentnode state gc` alike), so any
// process opening the file can show it.
type LifecycleStatus struct {
	LastAt time.Time       `json:"last_at"` // when the last pass ended
	Last   LifecycleReport `json:"last"`
	Since  time.Time       `json:"since"` // the first recorded pass
	Passes int             `json:"passes"`
	Totals LifecycleReport `json:"totals"`
}

// LifecycleStatus returns the recorded lifecycle status; its zero value
// (Passes 0) when no pass has run on this store.
func (r *Runtime) LifecycleStatus(ctx context.Context) (LifecycleStatus, error) {
	var st LifecycleStatus
	v, err := r.st.LoadSetting(ctx, lifecycleStatusKey)
	if err != nil || v == "" {
		return st, err
	}
	if err := json.Unmarshal([]byte(v), &st); err != nil {
		return LifecycleStatus{}, fmt.Errorf("state: lifecycle status: %w", err)
	}
	return st, nil
}

// recordPass adds one pass to the recorded status. Two processes finishing
// a pass at the same instant may lose one pass from the totals (read, then
// write); the last pass is always one of theirs.
func (r *Runtime) recordPass(ctx context.Context, rep LifecycleReport, at time.Time) error {
	st, err := r.LifecycleStatus(ctx)
	if err != nil {
		st = LifecycleStatus{} // unreadable: start over rather than never record again
	}
	if st.Passes == 0 {
		st.Since = at
	}
	st.LastAt, st.Last, st.Passes = at, rep, st.Passes+1
	st.Totals = st.Totals.add(rep)
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	return r.st.SaveSetting(ctx, lifecycleStatusKey, string(b))
}

func (a LifecycleReport) add(b LifecycleReport) LifecycleReport {
	return LifecycleReport{ExpiredOps: a.ExpiredOps + b.ExpiredOps, PurgedDocs: a.PurgedDocs + b.PurgedDocs,
		EvictedItems: a.EvictedItems + b.EvictedItems, Snapshots: a.Snapshots + b.Snapshots}
}

// String is the report as one line of counts.
func (a LifecycleReport) String() string {
	return fmt.Sprintf("expired ops %d, purged documents %d, evicted items %d, snapshots %d",
		a.ExpiredOps, a.PurgedDocs, a.EvictedItems, a.Snapshots)
}
