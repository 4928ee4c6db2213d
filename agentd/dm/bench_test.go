package dm_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentnode/agentnode/agentd/dm"
	"github.com/nbd-wtf/go-nostr"
)

// BenchmarkUnwrap: opening one DM (two NIP-44 decryptions, one seal
// signature check).
func BenchmarkUnwrap(b *testing.B) {
	agent, sender := newParty(), newParty()
	rumor := nostr.Event{Kind: 14, PubKey: sender.pk, CreatedAt: nostr.Now(), Tags: nostr.Tags{{"p", agent.pk}}, Content: "hello"}
	wrap, err := dm.Wrap(rumor, sender.sk, agent.pk)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := dm.Unwrap(wrap, agent.sk); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReply: building the agent's reply and wrapping it twice (to the
// sender and the agent's own copy).
func BenchmarkReply(b *testing.B) {
	agent, sender := newParty(), newParty()
	in := nostr.Event{Kind: 14, PubKey: sender.pk, CreatedAt: nostr.Now(), Tags: nostr.Tags{{"p", agent.pk}}, Content: "hello"}
	in.ID = in.GetID()
	for b.Loop() {
		out := dm.ReplyRumor(agent.pk, &in, "an answer of a few words", nostr.Now())
		if _, _, err := dm.WrapBoth(out, agent.sk, sender.pk); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFileLedger_Mark: recording one processed DM in the file ledger
// (<data>/dm) that already holds 10,000 processed wraps, durably (the
// figure in docs/DM.md, "Ledger").
func BenchmarkFileLedger_Mark(b *testing.B) {
	path := filepath.Join(b.TempDir(), "dm", "state.json")
	now := time.Now()
	done := map[string]int64{}
	for i := range 10_000 {
		done[fmt.Sprintf("%064x", i)] = now.Unix()
	}
	seed, _ := json.Marshal(map[string]any{"watermark": now.Unix(), "done": done})
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(path, seed, 0o600); err != nil {
		b.Fatal(err)
	}
	l, err := dm.OpenFileLedger(path, dm.DefaultCatchUpWindow)
	if err != nil {
		b.Fatal(err)
	}
	i := 0
	for b.Loop() {
		i++
		if err := l.Mark(fmt.Sprintf("%064x", 1_000_000+i), nostr.Timestamp(now.Unix()), now); err != nil {
			b.Fatal(err)
		}
	}
}
