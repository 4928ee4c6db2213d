package replicate_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd/state/replicate"
)

func TestPlan(t *testing.T) {
	for _, tc := range []struct {
		name              string
		running, want     map[string]string
		wantStop, wantRun []string
	}{
		{"nothing", nil, nil, nil, nil},
		{"a new agent", nil, map[string]string{"a": "o"}, nil, []string{"a"}},
		{"unchanged", map[string]string{"a": "o"}, map[string]string{"a": "o"}, nil, nil},
		{"an agent removed", map[string]string{"a": "o", "b": "o"}, map[string]string{"b": "o"}, []string{"a"}, nil},
		{"an owner changed", map[string]string{"a": "o"}, map[string]string{"a": "p"}, []string{"a"}, []string{"a"}},
		{"sorted", nil, map[string]string{"c": "o", "a": "o", "b": "o"}, nil, []string{"a", "b", "c"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stop, start := replicate.Plan(tc.running, tc.want)
			if !slices.Equal(stop, tc.wantStop) || !slices.Equal(start, tc.wantRun) {
				t.Errorf("Plan = stop %q, start %q; want stop %q, start %q", stop, start, tc.wantStop, tc.wantRun)
			}
		})
	}
}

func TestCachedDirectory_Agents(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	calls := 0
	var fail error
	next := replicate.DirectoryFunc(func(_ context.Context, owner string) ([]string, error) {
		calls++
		return []string{owner + "-agent"}, fail
	})
	d := replicate.NewCachedDirectory(next, time.Second, func() time.Time { return now })
	ask := func(want int) {
		t.Helper()
		got, err := d.Agents(context.Background(), "o")
		if err != nil || !slices.Equal(got, []string{"o-agent"}) || calls != want {
			t.Fatalf("Agents = %q, %v after %d calls; want [o-agent] after %d", got, err, calls, want)
		}
	}
	ask(1)
	ask(1) // cached
	now = now.Add(time.Second)
	ask(2) // expired
	d.Invalidate()
	ask(3)
	fail = errors.New("down")
	d.Invalidate()
	if _, err := d.Agents(context.Background(), "o"); !errors.Is(err, fail) {
		t.Fatalf("Agents with a failing directory: %v", err)
	}
	fail = nil
	ask(5) // a failure is not cached
}

func TestChangesOwners(t *testing.T) {
	for kind, want := range map[int]bool{0: true, 14199: true, 1: false, 4199: false, 30333: false} {
		if got := replicate.ChangesOwners(&nostr.Event{Kind: kind}); got != want {
			t.Errorf("ChangesOwners(kind %d) = %v, want %v", kind, got, want)
		}
	}
}
