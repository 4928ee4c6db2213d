package router

import (
	"context"
	"math"
	"time"
)

// Embedder turns texts into vectors: the node's embedding model (the
// OpenAI-compatible /v1/embeddings, llm.Client.Embed behind an adapter).
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float64, error)
}

// Embedding defaults.
const (
	// DefaultEmbedThreshold is the cosine similarity an embedding trigger
	// needs to match (Options.EmbedThreshold).
	DefaultEmbedThreshold = 0.8
	// embedTimeout bounds the one embeddings request of a Route.
	embedTimeout = 10 * time.Second
)

// embedHit is the best embedding trigger of one capability for a message.
type embedHit struct {
	value string
	score float64
}

// similarities embeds message (and the embedding triggers not yet cached)
// in one request and returns, per capability id, its best trigger with a
// score at or above the threshold. Without an Embedder or embedding
// triggers it does nothing; a failing request is no match (the text
// triggers and the fallback still route). It runs outside r.mu.
func (r *Router) similarities(message string) map[string]embedHit {
	texts, byCap := r.embedTexts()
	if r.opts.Embedder == nil || len(byCap) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), embedTimeout)
	defer cancel()
	vecs, err := r.opts.Embedder.Embed(ctx, append(texts, message))
	if err != nil || len(vecs) != len(texts)+1 {
		return nil
	}
	r.cacheVectors(texts, vecs[:len(texts)])
	return r.best(byCap, vecs[len(texts)])
}

// embedTexts returns the trigger texts without a cached vector and every
// capability's embedding triggers.
func (r *Router) embedTexts() (missing []string, byCap map[string][]string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	byCap = map[string][]string{}
	seen := map[string]bool{}
	for _, c := range r.installed {
		for _, t := range c.embeds {
			byCap[c.ID] = append(byCap[c.ID], t)
			if _, ok := r.vectors[t]; !ok && !seen[t] {
				seen[t] = true
				missing = append(missing, t)
			}
		}
	}
	return missing, byCap
}

func (r *Router) cacheVectors(texts []string, vecs [][]float64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, t := range texts {
		r.vectors[t] = vecs[i]
	}
}

// best scores each capability's triggers against msg.
func (r *Router) best(byCap map[string][]string, msg []float64) map[string]embedHit {
	r.mu.Lock()
	defer r.mu.Unlock()
	threshold := r.opts.EmbedThreshold
	if threshold <= 0 {
		threshold = DefaultEmbedThreshold
	}
	out := map[string]embedHit{}
	for id, texts := range byCap {
		for _, t := range texts {
			if s := cosine(r.vectors[t], msg); s >= threshold && s > out[id].score {
				out[id] = embedHit{value: t, score: s}
			}
		}
	}
	return out
}

// cosine is the cosine similarity of a and b (0 when they differ in
// length or either is zero).
func cosine(a, b []float64) float64 {
	if len(a) != len(b) || len(a) == 0 {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		dot += a[i] * b[i]
		na += a[i] * a[i]
		nb += b[i] * b[i]
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / (math.Sqrt(na) * math.Sqrt(nb))
}

// embedMatch returns the installed capability whose embedding trigger is
// most similar to the message (first in install order on a tie), if any.
func (r *Router) embedMatch(hits map[string]embedHit) (*compiled, string) {
	var best *compiled
	var hit embedHit
	for i := range r.installed {
		c := &r.installed[i]
		if h, ok := hits[c.ID]; ok && h.score > hit.score {
			best, hit = c, h
		}
	}
	return best, hit.value
}
