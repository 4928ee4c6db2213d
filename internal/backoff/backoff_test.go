package backoff_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agentnode/agentnode/internal/backoff"
)

func TestBackoff_Delay(t *testing.T) {
	b := backoff.Backoff{Min: time.Second, Max: 30 * time.Second}
	for n, want := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 30 * time.Second, 30 * time.Second} {
		if got := b.Ceiling(n); got != want {
			t.Errorf("Ceiling(%d) = %v, want %v", n, got, want)
		}
		for range 20 {
			if d := b.Delay(n); d < want/2 || d > want {
				t.Fatalf("Delay(%d) = %v, want in [%v, %v]", n, d, want/2, want)
			}
		}
	}
	if got := b.Ceiling(1000); got != b.Max {
		t.Errorf("Ceiling(1000) = %v, want Max (no overflow)", got)
	}
	if d := (backoff.Backoff{}).Delay(0); d < backoff.Default.Min/2 || d > backoff.Default.Min {
		t.Errorf("zero Backoff: Delay(0) = %v, want Default's", d)
	}
	if got := (backoff.Backoff{Min: time.Minute, Max: time.Second}).OrDefault(); got.Max < got.Min {
		t.Errorf("OrDefault = %+v: Max below Min", got)
	}
}

func TestSleep(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		if !backoff.Sleep(context.Background(), time.Hour) || time.Since(start) != time.Hour {
			t.Errorf("Sleep(1h) returned after %v", time.Since(start))
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		start = time.Now()
		if backoff.Sleep(ctx, time.Hour) || time.Since(start) != time.Minute {
			t.Errorf("Sleep(1h) under a 1-minute ctx: returned after %v, want false after 1m", time.Since(start))
		}
	})
}

// Loop waits more after each failed session, starts over after a healthy
// one, and returns when ctx ends (mid-wait or mid-session).
func TestBackoff_Loop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := backoff.Backoff{Min: time.Second, Max: 8 * time.Second}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		healthy := []bool{false, false, false, false, false, true, false}
		var starts []time.Time
		var ended []backoff.Retry
		b.Loop(ctx, func(context.Context) (bool, error) {
			starts = append(starts, time.Now())
			if len(starts) > len(healthy) {
				cancel()
				return false, ctx.Err()
			}
			return healthy[len(starts)-1], errors.New("dropped")
		}, func(r backoff.Retry) { ended = append(ended, r) })
		if len(ended) != len(healthy) {
			t.Fatalf("%d sessions ended with a retry, want %d", len(ended), len(healthy))
		}
		for i, r := range ended {
			wantAttempt := i
			if i >= 5 {
				wantAttempt = i - 5
			}
			ceiling := b.Ceiling(wantAttempt)
			gap := starts[i+1].Sub(starts[i])
			if r.Attempt != wantAttempt || r.Healthy != healthy[i] || r.Err == nil || r.Wait != gap || gap < ceiling/2 || gap > ceiling {
				t.Errorf("retry %d: %+v after a gap of %v; want attempt %d, a wait in [%v, %v]", i, r, gap, wantAttempt, ceiling/2, ceiling)
			}
		}
	})
}
