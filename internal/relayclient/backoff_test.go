package relayclient_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agentnode/agentnode/internal/relayclient"
)

func TestBackoff_Delay(t *testing.T) {
	b := relayclient.Backoff{Min: time.Second, Max: 30 * time.Second}
	for n, want := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 30 * time.Second, 30 * time.Second} {
		for range 20 {
			if d := b.Delay(n); d < want/2 || d > want {
				t.Fatalf("Delay(%d) = %v, want in [%v, %v]", n, d, want/2, want)
			}
		}
	}
	if d := (relayclient.Backoff{}).Delay(0); d < relayclient.DefaultBackoff.Min/2 || d > relayclient.DefaultBackoff.Min {
		t.Errorf("zero Backoff: Delay(0) = %v, want DefaultBackoff's", d)
	}
}

func TestSleep(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		if !relayclient.Sleep(context.Background(), time.Hour) || time.Since(start) != time.Hour {
			t.Errorf("Sleep(1h) returned after %v", time.Since(start))
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		start = time.Now()
		if relayclient.Sleep(ctx, time.Hour) || time.Since(start) != time.Minute {
			t.Errorf("Sleep(1h) under a 1-minute ctx: returned after %v, want false after 1m", time.Since(start))
		}
	})
}
