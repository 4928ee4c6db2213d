package bench

import (
	"context"
	"math/rand/v2"
	"slices"

	"github.com/nbd-wtf/go-nostr"
)

// dataset is the stored set of the query phase: definitions, lessons
// spread uniformly over them, and comments on random lessons.
type dataset struct {
	defs   []*nostr.Event // the definitions, also at the head of events
	events []*nostr.Event // everything, oldest first
}

// genDataset generates and signs stored events, defs of them definitions
// and commentShare of them comments.
func genDataset(ctx context.Context, rng *rand.Rand, seed uint64, stored, defs int) (*dataset, error) {
	g := newGenerator(rng, stored)
	authors, agents, commenters, err := datasetKeys(seed)
	if err != nil {
		return nil, err
	}
	comments := int(float64(stored) * commentShare)
	lessons := max(stored-defs-comments, 0)

	defDrafts := make([]draft, defs)
	for i := range defDrafts {
		defDrafts[i] = g.definition(authors[i%len(authors)])
	}
	defEvents, err := signAll(ctx, defDrafts)
	if err != nil {
		return nil, err
	}
	lessonEvents, err := signAll(ctx, lessonDrafts(g, defEvents, agents, lessons))
	if err != nil {
		return nil, err
	}
	commentEvents, err := signAll(ctx, commentDrafts(g, lessonEvents, commenters, comments))
	if err != nil {
		return nil, err
	}
	return &dataset{defs: defEvents, events: slices.Concat(defEvents, lessonEvents, commentEvents)}, nil
}

// datasetKeys derives the definition authors, the agents and the commenters.
func datasetKeys(seed uint64) (authors, agents, commenters []key, err error) {
	if authors, err = deriveKeys(seed, "author", definitionAuthors); err != nil {
		return
	}
	if agents, err = deriveKeys(seed, "agent", agentKeys); err != nil {
		return
	}
	commenters, err = deriveKeys(seed, "commenter", commenterKeys)
	return
}

// lessonDrafts drafts n lessons on random definitions by random agents.
func lessonDrafts(g *generator, defs []*nostr.Event, agents []key, n int) []draft {
	out := make([]draft, n)
	for i := range out {
		out[i] = g.lesson(defs[g.rng.IntN(len(defs))].ID, agents[g.rng.IntN(len(agents))])
	}
	return out
}

// commentDrafts drafts n comments on random lessons by random commenters.
func commentDrafts(g *generator, lessons []*nostr.Event, commenters []key, n int) []draft {
	if len(lessons) == 0 {
		return nil
	}
	out := make([]draft, n)
	for i := range out {
		out[i] = g.comment(lessons[g.rng.IntN(len(lessons))], commenters[g.rng.IntN(len(commenters))])
	}
	return out
}

// genIngestLessons generates and signs n lessons on a few random
// definition ids (which need not exist: lessons only name them).
func genIngestLessons(ctx context.Context, rng *rand.Rand, seed uint64, n int) ([]*nostr.Event, error) {
	g := newGenerator(rng, n)
	agents, err := deriveKeys(seed, "ingest-agent", agentKeys)
	if err != nil {
		return nil, err
	}
	defIDs := make([]string, 10)
	for i := range defIDs {
		defIDs[i] = g.randomID()
	}
	drafts := make([]draft, n)
	for i := range drafts {
		drafts[i] = g.lesson(defIDs[g.rng.IntN(len(defIDs))], agents[g.rng.IntN(len(agents))])
	}
	return signAll(ctx, drafts)
}
