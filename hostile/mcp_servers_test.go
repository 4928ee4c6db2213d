package hostile

import (
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
)

// TestMCPServers_consentThroughTheCLI: a kind-4200 from a stranger is
// recorded pending and shown (command, author not trusted); approving it
// needs the event id and, for an untrusted author, --accept-untrusted; a
// new event of the same server is pending again; deny records it.
func TestMCPServers_consentThroughTheCLI(t *testing.T) {
	n := startNode(t, nil)
	agent := n.installAgent(t)
	node := []string{"--node", "http://" + n.addr, "--data", n.data}
	stranger := nostr.GeneratePrivateKey()
	announce := func(args ...string) string {
		evt, err := publish(n.client(t), stranger, 4200, nostr.Tags{{"name", "echo"}, append(nostr.Tag{"command"}, args...)}, "says hi", 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		return evt.ID
	}
	id := announce("/bin/echo", "hi")

	var rec struct {
		S       string `json:"state"`
		E       string `json:"event_id"`
		Trusted bool   `json:"author_trusted"`
		Command []string
	}
	cliJSON(t, &rec, append([]string{"agent", "mcp", "add", agent, id, "--json"}, node...)...)
	if rec.S != "pending" || rec.Trusted || strings.Join(rec.Command, " ") != "/bin/echo hi" {
		t.Fatalf("added: %+v; want pending, untrusted, the exact command", rec)
	}
	out, err := n.cli(t, "", "agent", "mcp", "list", agent)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"PENDING", "author NOT trusted", `["/bin/echo" "hi"]`, id} {
		if !strings.Contains(out, want) {
			t.Errorf("agent mcp list lacks %q:\n%s", want, out)
		}
	}
	if e := cliFails(t, append([]string{"agent", "mcp", "approve", agent, "echo"}, node...)...); !strings.Contains(e, "--event") {
		t.Errorf("approve without --event: %s", e)
	}
	if e := cliFails(t, append([]string{"agent", "mcp", "approve", agent, "echo", "--event", id}, node...)...); !strings.Contains(e, "not trusted") {
		t.Errorf("approve of an untrusted author's server without --accept-untrusted: %s", e)
	}
	cliJSON(t, &rec, append([]string{"agent", "mcp", "approve", agent, "echo", "--event", id, "--accept-untrusted", "--json"}, node...)...)
	if rec.S != "approved" {
		t.Fatalf("approved: %+v", rec)
	}

	id2 := announce("/bin/echo", "changed")
	cliJSON(t, &rec, append([]string{"agent", "mcp", "add", agent, id2, "--json"}, node...)...)
	if rec.S != "pending" || rec.E != id2 {
		t.Fatalf("a new event of the server: %+v; want pending on %s", rec, id2)
	}
	if e := cliFails(t, append([]string{"agent", "mcp", "approve", agent, "echo", "--event", id, "--accept-untrusted"}, node...)...); !strings.Contains(e, "review it again") {
		t.Errorf("approving the old event after a new one: %s", e)
	}
	cliJSON(t, &rec, append([]string{"agent", "mcp", "deny", agent, "echo", "--event", id2, "--json"}, node...)...)
	if rec.S != "denied" {
		t.Fatalf("denied: %+v", rec)
	}
}
