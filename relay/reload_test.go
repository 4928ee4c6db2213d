package relay

import (
	"slices"
	"testing"
	"time"
)

// TestRelay_ReloadLimits: a reload applies the limits tagged
// reload:"live" and reports the others, by config name, as needing a
// restart; those keep their old values.
func TestRelay_ReloadLimits(t *testing.T) {
	tr := openTestRelay(t, t.TempDir(), Limits{MaxContentBytes: 1000, MaxSubscriptions: 10})
	applied, restart := tr.ReloadLimits(Limits{MaxContentBytes: 5000, MaxSubscriptions: 20, MaxFutureSkew: time.Hour})
	if want := []string{"max_content_bytes 1000 -> 5000", "max_future_skew_seconds 15m0s -> 1h0m0s"}; !slices.Equal(applied, want) {
		t.Errorf("applied %q, want %q", applied, want)
	}
	if want := []string{"max_subscriptions 10 -> 20"}; !slices.Equal(restart, want) {
		t.Errorf("restart %q, want %q", restart, want)
	}
	got := tr.limits()
	if got.MaxContentBytes != 5000 || got.MaxSubscriptions != 10 || got.MaxFutureSkew != time.Hour {
		t.Errorf("in force: content %d, subscriptions %d, skew %v; want 5000, 10 (restart only), 1h",
			got.MaxContentBytes, got.MaxSubscriptions, got.MaxFutureSkew)
	}
	if applied, restart := tr.ReloadLimits(Limits{MaxContentBytes: 5000, MaxSubscriptions: 10, MaxFutureSkew: time.Hour}); applied != nil || restart != nil {
		t.Errorf("the same limits again: applied %q, restart %q; want nothing", applied, restart)
	}
}

// TestLimits_withDefaults: every zero field takes DefaultLimits' (the
// connections and memory bounds the machine's), a set one is kept, and
// content is clamped to what the store holds.
func TestLimits_withDefaults(t *testing.T) {
	got := Limits{MaxFilters: 7, MaxContentBytes: 1 << 20}.withDefaults()
	want := DefaultLimits
	want.MaxFilters, want.MaxContentBytes = 7, maxStorable
	want.MaxConnections, want.MemoryCeiling = got.MaxConnections, got.MemoryCeiling
	if got != want {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
	if got.MaxConnections <= 0 || got.MemoryCeiling <= 0 {
		t.Errorf("connections %d, memory ceiling %d: want the machine's defaults", got.MaxConnections, got.MemoryCeiling)
	}
}
