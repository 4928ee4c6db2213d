package contextvm_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentnode/agentnode/agentd/contextvm"
	"github.com/agentnode/agentnode/internal/netguard"
	"github.com/agentnode/agentnode/internal/testkit"
	"github.com/agentnode/agentnode/internal/testkit/testrelay"
)

// allowLoopback lets the clients of tests dial their relays on 127.0.0.1.
var allowLoopback = netguard.Policy{AllowPrivate: true}

// A service_uri's relay on 127.0.0.1 (a stranger's way into the node's
// own network) is not dialled by default: Connect fails at once saying
// why, and the relay sees no request. Allowed, the client subscribes there.
func TestClientTransport_loopbackRelayRefusedByDefault(t *testing.T) {
	_, r := testrelay.Serve(t)
	var hits atomic.Int64
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		hits.Add(1)
		r.ServeHTTP(w, req)
	}))
	t.Cleanup(front.Close)
	url := "ws" + strings.TrimPrefix(front.URL, "http")
	ctx, cancel := context.WithTimeout(context.Background(), testWait)
	defer cancel()

	tr := &contextvm.ClientTransport{Relays: []string{url}, SecretKey: testkit.NewKey(t).SK, Server: testkit.NewKey(t).PK}
	_, err := tr.Connect(ctx)
	var blocked *netguard.BlockedError
	if !errors.As(err, &blocked) || blocked.Why != "loopback" {
		t.Fatalf("default policy: Connect = %v, want a loopback *netguard.BlockedError", err)
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the relay on loopback saw %d requests, want 0", n)
	}

	tr.Network = allowLoopback
	conn, err := tr.Connect(ctx)
	if err != nil {
		t.Fatalf("loopback allowed: %v", err)
	}
	conn.Close()
	if hits.Load() == 0 {
		t.Error("loopback allowed: the relay saw no request")
	}
}
