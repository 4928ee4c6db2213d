package tasks

// Candidate is an agent a task may go to, as the directory ranks it.
type Candidate struct {
	ID       string
	Quality  float64 // 0..10
	Load     int     // tasks running, from its latest heartbeat
	Capacity int     // concurrent tasks accepted (0: unknown)
}

// The weights of Pick's score.
const (
	QualityWeight = 0.7
	FreeWeight    = 0.3
)

// Pick chooses among candidates (best-ranked first, already filtered to the
// available ones matching the task's capabilities) the one to assign:
// its live load is the larger of the heartbeat's Load and active[ID] (the
// tasks this node has in flight on it); an agent whose live load reaches
// its Capacity is skipped; the rest score
//
//	QualityWeight × Quality/10 + FreeWeight × free
//
// where free = 1 − load/capacity (capacity unknown: 1/(1+load)), and the
// highest score wins; ties keep the given order. ok is false when every
// candidate is full (or there are none).
func Pick(candidates []Candidate, active map[string]int) (best Candidate, ok bool) {
	bestScore := -1.0
	for _, c := range candidates {
		load := max(c.Load, active[c.ID])
		if c.Capacity > 0 && load >= c.Capacity {
			continue
		}
		if sc := score(c, load); sc > bestScore {
			best, bestScore, ok = c, sc, true
		}
	}
	return best, ok
}

func score(c Candidate, load int) float64 {
	free := 1 / float64(1+load)
	if c.Capacity > 0 {
		free = 1 - float64(load)/float64(c.Capacity)
	}
	return QualityWeight*min(max(c.Quality, 0), 10)/10 + FreeWeight*free
}
