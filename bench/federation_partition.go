package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/internal/relayclient"
	"github.com/agentnode/agentnode/relay/negsync"
)

// maxHealRounds bounds the anti-entropy rounds of a partition heal.
const maxHealRounds = 6

// PartitionReport is the partition-heal figure: the nodes are cut into two
// halves (every syncer follows only the peers of its own half: live
// forwarding goes on inside each half), lessons are published at random
// nodes, then the partition heals and anti-entropy runs in rounds — in a
// round every node reconciles once, by NIP-77 (relay/negsync, down), with
// each peer it follows, side by side — while the syncers of the halves
// keep forwarding live. Rounds is how many rounds it took until every node
// held every lesson (0: not within maxHealRounds); Delivered lists the
// (lesson, node) pairs held after each round.
type PartitionReport struct {
	Lessons   int           `json:"lessons"`
	Expected  int           `json:"expected"`
	Before    int           `json:"before"` // held when the partition healed
	Delivered []int         `json:"delivered_per_round"`
	Rounds    int           `json:"rounds"`
	Converged time.Duration `json:"converged"`  // from the heal until every node held every lesson
	RoundTime time.Duration `json:"round_time"` // the longest round (reconciliations only)
}

// partitionHeal measures PartitionReport and leaves every node following
// all its peers again.
func partitionHeal(ctx context.Context, rng *rand.Rand, nodes []*fedNode, follow [][]int, sk, defID string, opts FederationOptions) (*PartitionReport, error) {
	side := make([]bool, len(nodes))
	for _, i := range rng.Perm(len(nodes))[:len(nodes)/2] {
		side[i] = true
	}
	for i, n := range nodes {
		n.stopSync()
		var same []int
		for _, j := range follow[i] {
			if side[j] == side[i] {
				same = append(same, j)
			}
		}
		n.follow(ctx, followURLs(nodes, same), defID)
	}
	var ids []string
	for k := range max(opts.Lessons/4, 1) {
		at := rng.IntN(len(nodes))
		evt := fedLesson(nodes[at].agent, defID, fmt.Sprintf("during the partition %d", k))
		if nodes[at].r.Publish(ctx, evt) == nil {
			ids = append(ids, evt.ID)
		}
	}
	rep := &PartitionReport{Lessons: len(ids), Expected: len(ids) * len(nodes)}
	held := func() int { return countHeld(nodes, ids) }
	rep.Before = quiesce(ctx, held, rep.Expected)
	start := time.Now()
	for r := 1; r <= maxHealRounds && rep.Rounds == 0; r++ {
		t0 := time.Now()
		if err := healRound(ctx, nodes, follow, defID); err != nil {
			return nil, err
		}
		rep.RoundTime = max(rep.RoundTime, time.Since(t0))
		got := quiesce(ctx, held, rep.Expected)
		rep.Delivered = append(rep.Delivered, got)
		if got == rep.Expected {
			rep.Rounds, rep.Converged = r, time.Since(start)
		}
	}
	for i, n := range nodes { // back to the full topology
		n.stopSync()
		n.follow(ctx, followURLs(nodes, follow[i]), defID)
	}
	return rep, nil
}

// countHeld counts the (lesson, node) pairs stored.
func countHeld(nodes []*fedNode, ids []string) int {
	n := 0
	for _, id := range ids {
		for _, node := range nodes {
			if _, ok := node.arrived.Load(id); ok {
				n++
			}
		}
	}
	return n
}

// quiesce waits until held() reaches want or has not changed for a
// second (live forwarding has settled), at most 30 s; it returns held().
func quiesce(ctx context.Context, held func() int, want int) int {
	last, since, deadline := held(), time.Now(), time.Now().Add(30*time.Second)
	for last < want && time.Since(since) < time.Second && time.Now().Before(deadline) && ctx.Err() == nil {
		sleepCtx(ctx, 50*time.Millisecond)
		if now := held(); now != last {
			last, since = now, time.Now()
		}
	}
	return last
}

// healRound is one anti-entropy round: every node pulls from each peer it
// follows by negentropy, 8 reconciliations at a time.
func healRound(ctx context.Context, nodes []*fedNode, follow [][]int, defID string) error {
	filter := nostr.Filter{Kinds: []int{4129}, Tags: nostr.TagMap{"e": {defID}}}
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	for i, n := range nodes {
		for _, j := range slices.Clone(follow[i]) {
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				if err := pull(ctx, n, nodes[j].url, filter); err != nil {
					mu.Lock()
					errs = append(errs, fmt.Errorf("node %d from %d: %w", i, j, err))
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	if len(errs) > 0 {
		return fmt.Errorf("bench federation: heal round: %w", errs[0])
	}
	return nil
}

// pull reconciles n with the relay at url and fetches what only it has.
func pull(ctx context.Context, n *fedNode, url string, filter nostr.Filter) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	conn, err := relayclient.Dial(ctx, url, relayclient.Options{Verify: true})
	if err != nil {
		return err
	}
	defer conn.Close()
	_, err = negsync.Sync(ctx, conn, n.r, negsync.Options{Filter: filter, Dir: negsync.Down})
	return err
}
