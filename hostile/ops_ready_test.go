package hostile

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/internal/pgtest"
	"github.com/agentnode/agentnode/internal/testkit"
)

func TestReadyz_LMDB(t *testing.T) {
	n := startNode(t, nil)
	if code, body := httpGet(t, n, "/readyz"); code != 200 || !strings.Contains(body, `"ok": true`) {
		t.Fatalf("/readyz of a serving LMDB node: %d %s", code, body)
	}
}

// TestReadyz_followsPostgres: /readyz turns 503 with the reason within 5 s
// of PostgreSQL stopping and 200 once it is back; /healthz (liveness) stays
// 200 throughout; writes work again afterwards.
func TestReadyz_followsPostgres(t *testing.T) {
	url := pgtest.URL(t)
	n := startNodeWith(t, map[string]any{"postgres": map[string]any{"url": url}})
	if code, body := httpGet(t, n, "/readyz"); code != 200 {
		t.Fatalf("/readyz before PostgreSQL stops: %d %s", code, body)
	}
	pgtest.Stop(t)
	var body string
	testkit.WaitFor(t, 5*time.Second, "/readyz to answer 503 after PostgreSQL stopped", func() bool {
		var code int
		code, body = httpGet(t, n, "/readyz")
		return code == 503
	})
	if !strings.Contains(body, `"reason": "postgres not answering"`) && !strings.Contains(body, `"reason": "postgres listener disconnected"`) {
		t.Errorf("/readyz gives no reason naming PostgreSQL: %s", body)
	}
	if strings.Contains(body, "127.0.0.1") || strings.Contains(body, "user=") || strings.Contains(body, "dial") {
		t.Errorf("/readyz shows a stranger the database error's detail: %s", body)
	}
	testkit.WaitFor(t, 10*time.Second, "the node to log why it is not ready", func() bool {
		return strings.Contains(n.logs.String(), "not ready") // the log arrives through a pipe
	})
	if !n.healthy() {
		t.Error("/healthz is not 200 while PostgreSQL is down: liveness must not follow the database")
	}
	pgtest.Start(t)
	testkit.WaitFor(t, 30*time.Second, "/readyz to answer 200 after PostgreSQL returned", func() bool {
		code, b := httpGet(t, n, "/readyz")
		body = b
		return code == 200
	})
	c := n.client(t)
	if _, err := publish(c, nostr.GeneratePrivateKey(), 1, nil, "back", 20*time.Second); err != nil {
		t.Fatalf("publish after PostgreSQL returned: %v", err)
	}
}

// TestReadyz_floodDoesNotStarveWrites: strangers hammering /readyz on a
// PostgreSQL node (each probe could be a database ping) do not keep
// publishers from their OKs: one check runs at a time and its answer is
// reused for a second.
func TestReadyz_floodDoesNotStarveWrites(t *testing.T) {
	url := pgtest.URL(t)
	n := startNodeWith(t, map[string]any{"postgres": map[string]any{"url": url},
		"relay": map[string]any{"events_per_second": 100000, "events_burst": 100000}})
	ctx, stop := context.WithCancel(context.Background())
	var probes, notReady atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			c := &http.Client{Timeout: 10 * time.Second}
			for ctx.Err() == nil {
				resp, err := c.Get("http://" + n.addr + "/readyz")
				if err != nil {
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				probes.Add(1)
				if resp.StatusCode != 200 {
					notReady.Add(1)
				}
			}
		})
	}
	defer func() { stop(); wg.Wait() }()
	c := n.client(t)
	sk := nostr.GeneratePrivateKey()
	for i := range 300 {
		if _, err := publish(c, sk, 1, nil, fmt.Sprint("under probes ", i), 20*time.Second); err != nil {
			t.Fatalf("publish %d during the /readyz flood (%d probes so far): %v", i, probes.Load(), err)
		}
	}
	stop()
	wg.Wait()
	if notReady.Load() > 0 {
		t.Errorf("%d of %d probes answered not ready while the database was up", notReady.Load(), probes.Load())
	}
	t.Logf("300 events published during %d /readyz probes", probes.Load())
}
