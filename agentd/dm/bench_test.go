package dm_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentnode/agentnode/agentd/dm"
	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip44"
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
		if err := l.Mark(b.Context(), fmt.Sprintf("%064x", 1_000_000+i), nostr.Timestamp(now.Unix()), now); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkUnwrap_junk: rejecting a junk gift wrap — ciphertext that is
// not NIP-44 (no key agreement), and a NIP-44 payload holding a seal with
// a forged signature (a key agreement, a decryption, a signature check).
func BenchmarkUnwrap_junk(b *testing.B) {
	agent := newParty()
	notNIP44 := &nostr.Event{Kind: 1059, PubKey: newParty().pk, Content: "junk"}
	otk := newParty()
	key, _ := nip44.GenerateConversationKey(agent.pk, otk.sk)
	seal, _ := json.Marshal(nostr.Event{Kind: 13, PubKey: newParty().pk, Content: "x", ID: strings.Repeat("00", 32), Sig: strings.Repeat("00", 64)})
	content, _ := nip44.Encrypt(string(seal), key)
	forged := &nostr.Event{Kind: 1059, PubKey: otk.pk, Content: content}
	for name, wrap := range map[string]*nostr.Event{"notNIP44": notNIP44, "forgedSeal": forged} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if _, err := dm.Unwrap(wrap, agent.sk); err == nil {
					b.Fatal("junk opened")
				}
			}
		})
	}
}
