package agentd_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd"
	"github.com/agentnode/agentnode/agentd/state"
	"github.com/agentnode/agentnode/capabilities/acp"
	"github.com/agentnode/agentnode/internal/testkit"
)

const (
	noteID  = "did:nuwa:cap:note@1.0.0"
	noteURI = "did:nuwa:state:note#v1"
)

// capsNode is a node whose daemon has a real state runtime (state.db in
// its own temp dir), an installed agent and a package author.
type capsNode struct {
	*node
	rt     *state.Runtime
	agent  agentd.Installed
	owner  key
	author key
}

// openCapsNode opens a relay, a state runtime and a daemon over them
// (cfg's State is set), and installs one agent.
func openCapsNode(t testing.TB, cfg agentd.Config) *capsNode {
	t.Helper()
	rt, err := state.Open(context.Background(), state.Options{Dir: t.TempDir(), Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(context.Background()) })
	cfg.State = rt
	n := openNode(t, cfg)
	cn := &capsNode{node: n, rt: rt, owner: testkit.NewKey(t), author: testkit.NewKey(t)}
	def := n.definition(testkit.NewKey(t), reviewer())
	cn.agent = n.install(agentd.InstallRequest{Definition: def.ID, Owner: cn.owner.PK, Name: "Notes Agent"})
	return cn
}

// notePackage is testdata/note.acp.yaml at version with fetchURL bound;
// extra permissions are added to permissions.require.
func notePackage(t testing.TB, version, fetchURL string, extra ...string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/note.acp.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := strings.ReplaceAll(string(b), "{{FETCH_URL}}", fetchURL)
	s = strings.Replace(s, "did:nuwa:cap:note@1.0.0", "did:nuwa:cap:note@"+version, 1)
	if len(extra) > 0 {
		s = strings.Replace(s, `"state.query"]`, `"state.query", "`+strings.Join(extra, `", "`)+`"]`, 1)
	}
	return []byte(s)
}

// sign signs a package file with sk.
func sign(t testing.TB, raw []byte, sk string) []byte {
	t.Helper()
	out, err := acp.SignAs(raw, sk, acp.SigFormNostr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// publishCap publishes raw as a kind-30199 event signed by sk; an
// unsigned file is signed by sk first (a package is resolved only when its
// file is signed by the event's author).
func (n *node) publishCap(sk string, raw []byte) *nostr.Event {
	n.t.Helper()
	if _, err := acp.Verify(raw); errors.Is(err, acp.ErrUnsigned) {
		raw = sign(n.t, raw, sk)
	}
	p, err := acp.Parse(raw, acp.Options{})
	if err != nil {
		n.t.Fatal(err)
	}
	return n.publish(sk, acp.EventTemplate(p))
}

// installFile installs a signed note package from bytes.
func (cn *capsNode) installFile(raw []byte) agentd.CapChange {
	cn.t.Helper()
	ch, err := cn.d.InstallCap(context.Background(), cn.agent.Npub, agentd.CapInstallRequest{YAML: string(raw)})
	if err != nil {
		cn.t.Fatalf("install: %v", err)
	}
	return ch
}

// noteObject is a valid note (a fresh uuid) as JSON.
func noteObject(title string) string {
	var b [16]byte
	rand.Read(b[:])
	b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
	id := fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
	return fmt.Sprintf(`{"id":%q,"title":%q,"body":"body of %s","tags":[],"createdAt":"2026-01-01T00:00:00Z","updatedAt":"2026-01-01T00:00:00Z"}`, id, title, title)
}
