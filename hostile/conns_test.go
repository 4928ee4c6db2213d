package hostile

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fasthttp/websocket"
	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/internal/relayclient"
	"github.com/agentnode/agentnode/internal/testkit"
)

// Item 5 of issue 21. 300 definitions of 60 KB (18 MB, over the 8 MiB
// outbound budget) are stored. Before the fix a REQ for them cut the
// reading client off as a slow consumer after a few milliseconds (0
// events, NOTICE, close 1008), and `agentnode def list` failed the same
// way. Now the answer is paced by the client's reading: a raw websocket
// and `def list` get all 300; a client that does not read is still cut
// off (by the write timeout: its writer makes no progress), and
// publishing goes on meanwhile.
func TestLargeAnswer_isPacedNotCut(t *testing.T) {
	const count, size = 300, 60_000
	n := startNode(t, map[string]any{"write_timeout_seconds": 3, "events_per_second": -1})
	publishDefinitions(t, n, count, size)

	reader := dialRaw(t, n, 0)
	reader.send(t, "REQ", "big", map[string]any{"kinds": []int{4199}, "limit": count})
	if got, end := readAnswer(reader, "big", 60*time.Second); got != count || end != "EOSE" {
		t.Fatalf("a reading client got %d of %d events, then %s", got, count, end)
	}

	out, err := runCLI(t, n, "def", "list", "--relay", n.url, "--json", "--limit", "1000")
	if err != nil {
		t.Fatalf("def list with %d definitions of %d bytes: %v\n%s", count, size, err, out)
	}
	var list []json.RawMessage
	if err := json.Unmarshal(out, &list); err != nil || len(list) != count {
		t.Fatalf("def list printed %d definitions (want %d): %v", len(list), count, err)
	}

	slow := dialRaw(t, n, 4096)
	slow.send(t, "REQ", "big", map[string]any{"kinds": []int{4199}, "limit": count})
	pub := n.client(t)
	if _, err := publish(pub, nostr.GeneratePrivateKey(), 1, nil, "while one does not read", 10*time.Second); err != nil {
		t.Fatalf("publish while a client does not read its answer: %v", err)
	}
	testkit.WaitFor(t, 30*time.Second, "the node to close the connection that does not read", func() bool {
		return !serverSideEstablished(t, n, slow.LocalAddr())
	})
	if got, end := readAnswer(slow, "big", 20*time.Second); got >= count || end == "EOSE" {
		t.Fatalf("the client that did not read got %d of %d events and %s: it was never cut off", got, count, end)
	}
}

// Item 6 of issue 21: idle websockets from one address are refused past
// the per-address bound with 429 and a reason; past the node's bound,
// from any address, with 503; /healthz, NIP-11 and another address keep
// working; a closed connection gives its slot back. Before the fix every
// connection was accepted until the node ran out of file descriptors.
func TestConnections_areBoundedPerAddressAndInAll(t *testing.T) {
	const perIP, total = 20, 30
	n := startNode(t, map[string]any{"max_connections_per_ip": perIP, "max_connections": total})
	var first []*websocket.Conn
	for i := range perIP {
		c, status, body := dialFrom(t, n, "127.0.0.1")
		if c == nil {
			t.Fatalf("connection %d from 127.0.0.1 refused: %d %s", i+1, status, body)
		}
		first = append(first, c)
	}
	if c, status, body := dialFrom(t, n, "127.0.0.1"); c != nil || status != http.StatusTooManyRequests ||
		!strings.Contains(body, fmt.Sprintf("at most %d websocket connections per client address", perIP)) {
		t.Fatalf("connection %d from one address: got status %d %q, want 429 naming the bound", perIP+1, status, body)
	}
	for i := range total - perIP {
		if c, status, body := dialFrom(t, n, "127.0.0.2"); c == nil {
			t.Fatalf("connection %d from 127.0.0.2 refused: %d %s", i+1, status, body)
		}
	}
	if c, status, body := dialFrom(t, n, "127.0.0.3"); c != nil || status != http.StatusServiceUnavailable ||
		!strings.Contains(body, fmt.Sprintf("at most %d websocket connections", total)) {
		t.Fatalf("connection %d in all: got status %d %q, want 503 naming the bound", total+1, status, body)
	}
	if !n.healthy() {
		t.Fatal("/healthz does not answer with every websocket slot taken")
	}
	lim := nip11Limitation(t, n)
	if lim["max_connections"] != total || lim["max_connections_per_ip"] != perIP {
		t.Fatalf("NIP-11 limitation advertises %v connections, %v per address; want %d, %d",
			lim["max_connections"], lim["max_connections_per_ip"], total, perIP)
	}
	first[0].Close()
	testkit.WaitFor(t, 10*time.Second, "a closed connection's slot to be free again", func() bool {
		c, _, _ := dialFrom(t, n, "127.0.0.1")
		return c != nil
	})
}

// Item 6 with the defaults: idle websockets from one address past 256 are
// refused with 429 while another address and /healthz are served (before
// the fix the node took connections until it ran out of descriptors).
func TestConnections_defaultPerAddressBound(t *testing.T) {
	n := startNode(t, nil)
	for i := range 256 {
		if c, status, body := dialFrom(t, n, "127.0.0.1"); c == nil {
			t.Fatalf("idle connection %d refused: %d %s", i+1, status, body)
		}
	}
	if c, status, body := dialFrom(t, n, "127.0.0.1"); c != nil || status != http.StatusTooManyRequests {
		t.Fatalf("idle connection 257 from one address: accepted=%v status %d %q, want 429", c != nil, status, body)
	}
	if c, status, body := dialFrom(t, n, "127.0.0.2"); c == nil {
		t.Fatalf("another address refused: %d %s", status, body)
	}
	if !n.healthy() {
		t.Fatal("/healthz does not answer")
	}
}

// The default bounds: 256 websockets per address, and in all the node's
// descriptor limit less a quarter of it (at least 256 kept), advertised
// in NIP-11.
func TestConnections_defaultsFollowTheDescriptorLimit(t *testing.T) {
	n := startNode(t, nil)
	nofile := softNOFILE(t, n)
	want := min(nofile-max(nofile/4, 256), 100_000)
	lim := nip11Limitation(t, n)
	if lim["max_connections"] != want || lim["max_connections_per_ip"] != 256 {
		t.Fatalf("with RLIMIT_NOFILE %d: NIP-11 says max_connections %v, max_connections_per_ip %v; want %d, 256",
			nofile, lim["max_connections"], lim["max_connections_per_ip"], want)
	}
}

// A memory ceiling configured low: clients that do not read hold the
// answers of large REQs in memory; past the shedding threshold new REQs
// are refused with "rate-limited: node is busy", new websockets and HTTP
// requests with 503 (while /healthz answers); once those clients are cut
// off (write timeout) the node takes work again.
func TestMemoryCeiling_shedsLoadAndRecovers(t *testing.T) {
	const count, size = 300, 60_000
	n := startNode(t, map[string]any{"memory_ceiling_mb": 192, "write_timeout_seconds": 8, "events_per_second": -1})
	publishDefinitions(t, n, count, size)
	probe := dialRaw(t, n, 0)
	testkit.WaitFor(t, 20*time.Second, "the node to take REQs before the attack", func() bool {
		return ask(t, probe)[0] == "EOSE"
	})
	t.Logf("RSS before the attack: %d MiB", n.rssBytes(t)>>20)
	var hogs []rawConn
	for range 10 { // each will hold up to its 18 MB answer in the node
		hogs = append(hogs, dialRaw(t, n, 4096))
	}
	for i, c := range hogs {
		c.send(t, "REQ", fmt.Sprint("hog", i), map[string]any{"kinds": []int{4199}, "limit": count})
	}
	busy := ""
	testkit.WaitFor(t, 20*time.Second, "the node to shed a new REQ", func() bool {
		msg := ask(t, probe)
		busy = strings.Join(msg, " ")
		return msg[0] == "CLOSED" && strings.HasPrefix(msg[2], "rate-limited: node is busy")
	})
	if status, body := httpGet(t, n, "/"); status != http.StatusServiceUnavailable || !strings.Contains(body, "node is busy") {
		t.Errorf("GET / while busy: %d %q, want 503 node is busy", status, body)
	}
	if c, status, _ := dialFrom(t, n, "127.0.0.1"); c != nil || status != http.StatusServiceUnavailable {
		t.Errorf("a new websocket while busy: status %d, want 503", status)
	}
	if !n.healthy() {
		t.Error("/healthz does not answer while the node sheds load")
	}
	t.Logf("shed: %s (RSS %d MiB)", busy, n.rssBytes(t)>>20)
	testkit.WaitFor(t, 40*time.Second, "the node to take REQs again", func() bool {
		return ask(t, probe)[0] == "EOSE"
	})
	if status, _ := httpGet(t, n, "/"); status != http.StatusOK {
		t.Fatalf("GET / after recovery: %d", status)
	}
}

// ask sends REQ "probe" for one kind-1 event and returns its first answer
// that is not an EVENT (EOSE or CLOSED), as strings.
func ask(t *testing.T, c rawConn) []string {
	t.Helper()
	c.send(t, "REQ", "probe", map[string]any{"kinds": []int{1}, "limit": 1})
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		_, b, err := c.ReadMessage()
		if err != nil {
			t.Fatalf("waiting for the answer to REQ probe: %v", err)
		}
		var msg []string
		jsonStrings(b, &msg)
		if len(msg) > 1 && msg[0] != "EVENT" && msg[1] == "probe" {
			return append(msg, "", "")
		}
	}
}

// publishDefinitions stores count kind-4199 definitions of about size
// bytes each, published concurrently over four connections.
func publishDefinitions(t testing.TB, n *node, count, size int) {
	t.Helper()
	sk := nostr.GeneratePrivateKey()
	body := strings.Repeat("d", size)
	var wg sync.WaitGroup
	errs := make(chan error, count)
	for w := range 4 {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		c, err := relayclient.Dial(ctx, n.url, relayclient.Options{})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < count; i += 4 {
				tags := nostr.Tags{{"d", fmt.Sprint("def-", i)}, {"title", fmt.Sprint("Definition ", i)}, {"ver", "1"}}
				if _, err := publish(c, sk, 4199, tags, fmt.Sprint(i, body), 20*time.Second); err != nil {
					errs <- fmt.Errorf("publish definition %d: %w", i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// readAnswer reads a subscription's events until EOSE, CLOSED, a NOTICE
// or the end of the connection, and says which ended it.
func readAnswer(c rawConn, id string, wait time.Duration) (events int, end string) {
	c.SetReadDeadline(time.Now().Add(wait))
	for {
		_, b, err := c.ReadMessage()
		if err != nil {
			return events, "error " + err.Error()
		}
		var msg []string
		jsonStrings(b, &msg)
		switch {
		case len(msg) > 1 && msg[0] == "EVENT" && msg[1] == id:
			events++
		case len(msg) > 0 && msg[0] == "EOSE":
			return events, "EOSE"
		case len(msg) > 0 && (msg[0] == "CLOSED" || msg[0] == "NOTICE"):
			return events, strings.Join(msg, " ")
		}
	}
}

// dialFrom opens a websocket to n from the loopback address local. On
// refusal it returns the HTTP status and body instead.
func dialFrom(t *testing.T, n *node, local string) (*websocket.Conn, int, string) {
	t.Helper()
	d := websocket.Dialer{HandshakeTimeout: 10 * time.Second, NetDialContext: (&net.Dialer{
		LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}).DialContext}
	c, resp, err := d.Dial(n.url, nil)
	if err == nil {
		t.Cleanup(func() { c.Close() })
		return c, 0, ""
	}
	if resp == nil {
		t.Fatalf("dial from %s: %v", local, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return nil, resp.StatusCode, string(body)
}

// httpGet fetches path from n.
func httpGet(t *testing.T, n *node, path string) (int, string) {
	t.Helper()
	c := http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get("http://" + n.addr + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// nip11Limitation is the "limitation" object of n's NIP-11 document, its
// numbers as ints.
func nip11Limitation(t *testing.T, n *node) map[string]any {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, "http://"+n.addr+"/", nil)
	req.Header.Set("Accept", "application/nostr+json")
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("NIP-11: %v", err)
	}
	defer resp.Body.Close()
	var doc struct {
		Limitation map[string]any `json:"limitation"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		t.Fatalf("NIP-11: %v", err)
	}
	for k, v := range doc.Limitation {
		if f, ok := v.(float64); ok {
			doc.Limitation[k] = int(f)
		}
	}
	return doc.Limitation
}

// softNOFILE is the node process's soft limit on open files.
func softNOFILE(t *testing.T, n *node) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/limits", n.cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "Max open files"); ok {
			var soft int
			fmt.Sscan(rest, &soft)
			return soft
		}
	}
	t.Fatal("no open-files limit in /proc/<pid>/limits")
	return 0
}

// serverSideEstablished reports whether the node still holds the TCP
// connection of the client at local in state ESTABLISHED (/proc/net/tcp).
func serverSideEstablished(t *testing.T, n *node, local net.Addr) bool {
	t.Helper()
	b, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		t.Fatal(err)
	}
	_, nodePort, _ := net.SplitHostPort(n.addr)
	var np int
	fmt.Sscan(nodePort, &np)
	want := fmt.Sprintf(":%04X %s:%04X 01 ", np, "0100007F", local.(*net.TCPAddr).Port)
	return bytes.Contains(b, []byte(want))
}

// runCLI runs the agentnode binary with args and a fresh HOME; it returns
// its standard output.
func runCLI(t *testing.T, n *node, args ...string) ([]byte, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return append(out, stderr.Bytes()...), err
	}
	return out, nil
}
