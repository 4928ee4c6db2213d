package relay

import "container/heap"

// hitHeap is a full answer's hits with the one that sorts last (oldest,
// then highest id) on top: the one a better candidate replaces.
type hitHeap []hit

func (h hitHeap) Len() int { return len(h) }

// Less puts the hit that sorts last in NIP-01's order first.
func (h hitHeap) Less(i, j int) bool {
	if h[i].ts != h[j].ts {
		return h[i].ts < h[j].ts
	}
	return h[i].id > h[j].id
}

func (h hitHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *hitHeap) Push(x any)   { *h = append(*h, x.(hit)) }
func (h *hitHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// init orders h as a heap.
func (h *hitHeap) init() { heap.Init(h) }

// fix restores the heap after its top was replaced.
func (h *hitHeap) fix() { heap.Fix(h, 0) }
