package bench

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/events"
)

// Event kinds the benchmark generates (NIP-AE and NIP-22).
const (
	kindComment    = events.KindComment
	kindLesson     = events.KindLesson
	kindDefinition = events.KindDefinition
)

// vocabulary is what definitions, lessons and comments are written in;
// search queries pick their word from it.
var vocabulary = strings.Fields(`python rust golang sql kubernetes docker testing
	security review refactor frontend backend database latency cache deploy
	monitoring logging parser compiler translation summary research finance legal
	medical design writing planning scheduling email support billing search index
	graph vector embedding prompt agent`)

// Shape of the generated data.
const (
	lessonContentBytes  = 200  // a lesson's content is about this long
	commentContentBytes = 100  // a comment's content is about this long
	commentShare        = 0.15 // share of the stored events that are comments
	definitionAuthors   = 10
	agentKeys           = 50
	commenterKeys       = 20
)

// key is a keypair in hex.
type key struct{ sk, pk string }

// deriveKeys returns n deterministic keypairs for seed and label.
func deriveKeys(seed uint64, label string, n int) ([]key, error) {
	keys := make([]key, n)
	for i := range keys {
		var b [8]byte
		binary.BigEndian.PutUint64(b[:], seed)
		sum := sha256.Sum256([]byte(string(b[:]) + label + strconv.Itoa(i)))
		sk := hex.EncodeToString(sum[:])
		pk, err := nostr.GetPublicKey(sk)
		if err != nil {
			return nil, fmt.Errorf("derive key: %w", err)
		}
		keys[i] = key{sk, pk}
	}
	return keys, nil
}

// draft is an unsigned event and the key that will sign it.
type draft struct {
	evt nostr.Event
	sk  string
}

// signAll signs drafts on every CPU and returns the events in order.
func signAll(ctx context.Context, drafts []draft) ([]*nostr.Event, error) {
	out := make([]*nostr.Event, len(drafts))
	workers := runtime.NumCPU()
	chunk := (len(drafts) + workers - 1) / max(workers, 1)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := min(w*chunk, len(drafts)), min((w+1)*chunk, len(drafts))
		wg.Go(func() { errs[w] = signRange(ctx, drafts[lo:hi], out[lo:hi]) })
	}
	wg.Wait()
	return out, errors.Join(errs...)
}

// signRange signs drafts into out, stopping when ctx ends.
func signRange(ctx context.Context, drafts []draft, out []*nostr.Event) error {
	for i := range drafts {
		if i%1024 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		evt := drafts[i].evt
		if err := evt.Sign(drafts[i].sk); err != nil {
			return fmt.Errorf("sign: %w", err)
		}
		out[i] = &evt
	}
	return nil
}

// generator writes event drafts with increasing created_at.
type generator struct {
	rng *rand.Rand
	at  nostr.Timestamp // created_at of the next draft
}

// newGenerator dates its n drafts one second apart, ending a minute ago.
func newGenerator(rng *rand.Rand, n int) *generator {
	return &generator{rng: rng, at: nostr.Now() - nostr.Timestamp(n) - 60}
}

// stamp returns the next created_at.
func (g *generator) stamp() nostr.Timestamp {
	g.at++
	return g.at
}

// word is a random vocabulary word.
func (g *generator) word() string { return vocabulary[g.rng.IntN(len(vocabulary))] }

// words is n random vocabulary words.
func (g *generator) words(n int) string {
	w := make([]string, n)
	for i := range w {
		w[i] = g.word()
	}
	return strings.Join(w, " ")
}

// prose is about size bytes of sentences made of vocabulary words.
func (g *generator) prose(size int) string {
	var b strings.Builder
	for b.Len() < size {
		fmt.Fprintf(&b, "When the task involves %s, prefer %s over %s and check %s first. ", g.word(), g.word(), g.word(), g.word())
	}
	return strings.TrimSpace(b.String()[:size])
}

// definition drafts a kind-4199 agent definition by author.
func (g *generator) definition(author key) draft {
	title := g.words(2) + " agent"
	return draft{sk: author.sk, evt: nostr.Event{Kind: kindDefinition, CreatedAt: g.stamp(),
		Tags: nostr.Tags{
			{"title", title},
			{"description", "Helps with " + g.words(6)},
			{"role", g.words(2) + " specialist"},
			{"use-criteria", "Use when the task needs " + g.words(3)},
			{"instructions", "Be precise about " + g.words(4) + "."},
			{"ver", "1"},
		},
		Content: ""}}
}

// lesson drafts a kind-4129 lesson on definition defID, signed by agent.
func (g *generator) lesson(defID string, agent key) draft {
	return draft{sk: agent.sk, evt: nostr.Event{Kind: kindLesson, CreatedAt: g.stamp(),
		Tags: nostr.Tags{
			{"title", "Lesson about " + g.words(3)},
			{"category", g.word()},
			{"e", defID},
		},
		Content: g.prose(lessonContentBytes)}}
}

// comment drafts a strict NIP-22 kind-1111 comment on lesson by author.
func (g *generator) comment(lesson *nostr.Event, author key) draft {
	k := strconv.Itoa(kindLesson)
	return draft{sk: author.sk, evt: nostr.Event{Kind: kindComment, CreatedAt: g.stamp(),
		Tags: nostr.Tags{
			{"E", lesson.ID}, {"K", k}, {"P", lesson.PubKey},
			{"e", lesson.ID}, {"k", k}, {"p", lesson.PubKey},
		},
		Content: g.prose(commentContentBytes)}}
}

// randomID is a random 64-hex event id.
func (g *generator) randomID() string {
	var b [32]byte
	for i := 0; i < len(b); i += 8 {
		binary.LittleEndian.PutUint64(b[i:], g.rng.Uint64())
	}
	return hex.EncodeToString(b[:])
}
