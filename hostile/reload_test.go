package hostile

import (
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentnode/agentnode/internal/testkit"
)

// hup sends SIGHUP to n and waits for the count-th log line containing
// mark (a reload logs one per SIGHUP).
func (n *node) hup(t *testing.T, mark string, count int) {
	t.Helper()
	if err := n.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 30*time.Second, "the reload's log line", func() bool {
		select {
		case <-n.exited:
			t.Fatalf("the node exited on SIGHUP: %v", n.err)
		default:
		}
		return strings.Count(n.logs.String(), mark) >= count
	})
}

// TestReload_SIGHUP: SIGHUP rereads --config and applies the run-time
// settings (a relay limit, the operators, the log level) without a
// restart, logs what changed and what needs a restart; an invalid file
// changes nothing; the node keeps serving and still stops cleanly.
func TestReload_SIGHUP(t *testing.T) {
	op, alice := testkit.NewKey(t), testkit.NewKey(t)
	cfg := map[string]any{"relay": map[string]any{"max_content_bytes": 1000, "events_per_second": -1}}
	n := launchNode(t, launch{config: cfg, logLevel: "info"})
	path := n.launch.configPath
	big := strings.Repeat("x", 2000)
	refusedContent(t, n, alice.SK, 1, big, "invalid: content is 2000 bytes")
	if status, _ := manageCall(t, n, op.SK, "supportedmethods"); status != http.StatusUnauthorized {
		t.Fatalf("NIP-86 before op is an operator: %d", status)
	}

	writeConfig(t, path, map[string]any{
		"relay": map[string]any{"max_content_bytes": 5000, "events_per_second": -1, "operators": []string{op.PK}, "max_subscriptions": 7},
		"node":  map[string]any{"log_level": "debug"},
		"http":  map[string]any{"max_body_bytes": 2 << 20},
		"trust": map[string]any{"allowlist": []string{alice.PK}},
	})
	if strings.Contains(n.logs.String(), "level=DEBUG") {
		t.Fatal("debug lines before the reload to debug")
	}
	n.hup(t, "reloaded (SIGHUP)", 1)
	logs := n.logs.String()
	for _, want := range []string{"relay.max_content_bytes 1000 -> 5000", "relay.operators 0 -> 1", "log level INFO -> DEBUG",
		"allowlist: 0 pubkeys -> rules:", "allowlist: 1 pubkeys", "need a restart", "relay.max_subscriptions", "http"} {
		if !strings.Contains(logs, want) {
			t.Errorf("the reload's log does not say %q", want)
		}
	}
	accepted(t, n, alice.SK, 1, big)
	testkit.WaitFor(t, 10*time.Second, "a debug line", func() bool { return strings.Contains(n.logs.String(), "level=DEBUG") })
	if lim := nip11Limitation(t, n); lim["max_content_length"] != 5000 || lim["max_subscriptions"] == 7 {
		t.Errorf("NIP-11 after the reload: max_content_length %v (want 5000), max_subscriptions %v (a restart-only key: unchanged)",
			lim["max_content_length"], lim["max_subscriptions"])
	}
	mustManage(t, n, op.SK, "supportedmethods")

	// an invalid file: refused, nothing changes
	writeConfig(t, path, map[string]any{"relay": map[string]any{"max_content_bytes": -5}})
	n.hup(t, "reload refused", 1)
	accepted(t, n, alice.SK, 1, big+"y")
	mustManage(t, n, op.SK, "supportedmethods")

	if _, err := n.terminate(t, 20*time.Second); err != nil {
		t.Fatalf("SIGTERM after the reloads: %v", err)
	}
}
