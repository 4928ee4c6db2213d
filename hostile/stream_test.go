package hostile

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentnode/agentnode/internal/testkit"
)

// A large answer is streamed in chunks of max_query_bytes (docs/RELAY.md,
// "Bounded reads"): a client that CLOSEs it or goes away after its first
// event stops the stream, which gives its share of query_memory back.
// Ten abandoned 18 MB answers under a 1 MiB ceiling and a 4 MiB process
// budget: had their streams lived on, holding a chunk each, every later
// REQ would be refused; a reader gets the whole answer.
func TestStreamedAnswer_abandonedStreamsEnd(t *testing.T) {
	const count, size = 300, 60_000
	n := startNode(t, map[string]any{"events_per_second": -1, "max_query_bytes": 1 << 20, "query_memory": 4 << 20})
	publishDefinitions(t, n, count, size)
	for i := range 10 {
		c := dialRaw(t, n, 0)
		id := fmt.Sprint("drop", i)
		c.send(t, "REQ", id, map[string]any{"kinds": []int{4199}, "limit": count})
		if got := streamFirstEvent(t, c, id); !got {
			t.Fatalf("abandoned answer %d: no first event", i)
		}
		if i%2 == 0 {
			c.send(t, "CLOSE", id)
		}
		c.Close()
	}
	if !n.healthy() {
		t.Fatal("node unhealthy after abandoned streams")
	}
	var got int
	var end string
	testkit.WaitFor(t, 60*time.Second, "a reader to get the whole answer", func() bool {
		c := dialRaw(t, n, 0)
		defer c.Close()
		c.send(t, "REQ", "all", map[string]any{"kinds": []int{4199}, "limit": count})
		got, end = readAnswer(c, "all", 30*time.Second)
		return got == count && end == "EOSE"
	})
}

// A REQ the process's query budget refuses is answered CLOSED with the
// rate-limited reason on the wire (it was a NOTICE and then EOSE, which a
// client takes for a complete, empty answer).
func TestStreamedAnswer_refusedREQIsClosed(t *testing.T) {
	n := startNode(t, map[string]any{"events_per_second": -1, "query_memory": 100_000})
	publishDefinitions(t, n, 20, 60_000)
	c := dialRaw(t, n, 0)
	c.send(t, "REQ", "big", map[string]any{"kinds": []int{4199}, "limit": 20})
	got, end := readAnswer(c, "big", 30*time.Second)
	if !strings.HasPrefix(end, "CLOSED big rate-limited: too many large queries") {
		t.Fatalf("REQ past query_memory: %d events, then %q; want CLOSED with a rate-limited reason", got, end)
	}
	if !n.healthy() {
		t.Fatal("node unhealthy after a refused REQ")
	}
}

// streamFirstEvent reads c until the first EVENT of sub id; false on
// anything else that ends the answer.
func streamFirstEvent(t *testing.T, c rawConn, id string) bool {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	for {
		_, b, err := c.ReadMessage()
		if err != nil {
			return false
		}
		var msg []string
		jsonStrings(b, &msg)
		if len(msg) > 1 && msg[0] == "EVENT" && msg[1] == id {
			return true
		}
		if len(msg) > 0 && (msg[0] == "EOSE" || msg[0] == "CLOSED") {
			return false
		}
	}
}
