package replicate

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/agentnode/agentnode/agentd/state/crdt"
	"github.com/agentnode/agentnode/agentd/state/store"
)

// Parts reassemble in any order and with duplicates; a payload whose
// parts do not match their sum, or whose parts disagree on the count, is
// refused; unfinished payloads expire.
func TestChunks_Reassembly(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	text := make([]byte, 20_000)
	for i := range text {
		text[i] = byte('a' + rng.IntN(26))
	}
	env := store.Envelope{Schema: "s", Doc: "d", Action: store.ActionOp,
		Op: crdt.Op{ID: crdt.OpID{Replica: "r", Counter: 1}, Kind: crdt.OpSet, Value: []byte(`"` + string(text) + `"`)}}
	sum, parts, err := chunkPayload(env, 1000)
	if err != nil || len(parts) < 2 {
		t.Fatalf("%d parts: %v", len(parts), err)
	}
	now := time.Now()
	var c chunks
	order := rng.Perm(len(parts))
	order = append([]int{order[0]}, order...) // a duplicate
	var whole string
	for k, i := range order {
		got, err := c.add("author", sum, i, len(parts), parts[i], now)
		if err != nil {
			t.Fatal(err)
		}
		if got != "" {
			if k < len(parts) {
				t.Fatalf("whole after %d of %d parts", k+1, len(parts))
			}
			whole = got
		}
	}
	if whole != strings.Join(parts, "") || len(c.pending) != 0 || c.size != 0 {
		t.Fatalf("reassembled %d bytes, %d pending, %d bytes kept", len(whole), len(c.pending), c.size)
	}

	bad := "0000000000000000000000000000000000000000000000000000000000000000"
	for i, p := range parts {
		_, err = c.add("author", bad, i, len(parts), p, now)
	}
	if err == nil {
		t.Fatal("a payload that does not match its sum was accepted")
	}
	if _, err := c.add("author", sum, 0, len(parts), parts[0], now); err != nil {
		t.Fatal(err)
	}
	if _, err := c.add("author", sum, 1, len(parts)+1, parts[1], now); err == nil {
		t.Fatal("parts that disagree on the count were accepted")
	}
	if _, err := c.add("other", sum, 0, len(parts), parts[0], now.Add(chunkTTL+time.Second)); err != nil {
		t.Fatal(err)
	}
	if len(c.pending) != 1 || c.pending["author:"+sum] != nil {
		t.Fatalf("the old unfinished payload did not expire: %d pending", len(c.pending))
	}
}

// One author's unfinished payloads cannot crowd out another's: each
// author keeps at most maxChunkAuthor, and a part's empty slots count
// toward the memory bound from the first part on.
func TestChunks_PerAuthorBound(t *testing.T) {
	var c chunks
	now := time.Now()
	sum := func(i int) string { return fmt.Sprintf("%064x", i) }
	if _, err := c.add("other", sum(0), 0, 2, "x", now); err != nil {
		t.Fatal(err)
	}
	for i := range 3 * maxChunkAuthor {
		if _, err := c.add("flooder", sum(i+1), 0, maxChunkParts, "x", now.Add(time.Duration(i)*time.Millisecond)); err != nil {
			t.Fatal(err)
		}
	}
	mine := 0
	for _, p := range c.pending {
		if p.author == "flooder" {
			mine++
		}
	}
	if mine != maxChunkAuthor || c.pending["other:"+sum(0)] == nil {
		t.Fatalf("flooder holds %d payloads (want %d); other's kept: %v", mine, maxChunkAuthor, c.pending["other:"+sum(0)] != nil)
	}
	if want := maxChunkAuthor*(chunkSlot*maxChunkParts+1) + chunkSlot*2 + 1; c.size != want {
		t.Fatalf("size %d, want %d (slots counted)", c.size, want)
	}
}
