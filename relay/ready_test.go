package relay

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// TestReadyCache_floodCostsOneCheckPerReuse: a thousand concurrent probes
// run one check; its answer serves every probe until readyReuse passes.
func TestReadyCache_floodCostsOneCheckPerReuse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c readyCache
		var checks atomic.Int64
		down := errors.New("down")
		check := func() error { checks.Add(1); time.Sleep(100 * time.Millisecond); return down }
		probe := func() {
			var wg sync.WaitGroup
			for range 1000 {
				wg.Go(func() {
					if err := c.get(context.Background(), check, func(error, error) {}); !errors.Is(err, down) {
						t.Errorf("probe answered %v, want the check's error", err)
					}
				})
			}
			wg.Wait()
		}
		probe()
		if got := checks.Load(); got != 1 {
			t.Fatalf("1000 concurrent probes ran %d checks, want 1", got)
		}
		time.Sleep(readyReuse / 2)
		probe()
		if got := checks.Load(); got != 1 {
			t.Fatalf("probes within readyReuse ran %d checks, want the first one only", got)
		}
		time.Sleep(readyReuse)
		probe()
		if got := checks.Load(); got != 2 {
			t.Fatalf("probes after readyReuse ran %d checks in all, want 2", got)
		}
	})
}

func TestRelay_ReadyzAnswersAndClosedIsNotReady(t *testing.T) {
	tr := openTestRelay(t, t.TempDir(), Limits{})
	resp, err := http.Get(tr.srv.URL + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("/readyz of an open relay: %d", resp.StatusCode)
	}
	if err := tr.store.readiness(context.Background()); err != nil {
		t.Fatalf("an open store is not ready: %v", err)
	}
	tr.store.close()
	if err := tr.store.readiness(context.Background()); !errors.Is(err, ErrClosed) {
		t.Fatalf("a closed store's readiness: %v, want ErrClosed", err)
	}
}
