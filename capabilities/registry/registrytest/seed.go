package registrytest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentnode/agentnode/relay"
	"github.com/nbd-wtf/go-nostr"
)

// Vocabulary is the word list generated descriptions draw from; benchmark
// queries draw from it too.
var Vocabulary = strings.Fields(`note notes weather forecast calendar meeting email inbox translate language
summary summarize search web page image photo recognize invoice payment budget expense travel flight hotel
recipe cooking music playlist podcast video transcript meeting agenda task todo reminder habit fitness
workout sleep health doctor medicine pharmacy garden plant water energy solar battery car repair bike map
route traffic parking bus train ticket event concert movie book library reading poem story code review
test deploy server database backup security password wallet bitcoin nostr relay chat message friend family
school homework math physics chemistry history geography art design color font logo brand marketing sales
customer support ticket bug feature release version changelog contract lawyer tax accounting report chart`)

// SeedSpec is the i-th generated package: a unique name, one of 64
// authors, 2-4 description words, a keyword trigger, two tools.
func SeedSpec(i int) (Spec, int) {
	r := rand.New(rand.NewPCG(uint64(i), 42))
	word := func() string { return Vocabulary[r.IntN(len(Vocabulary))] }
	desc := make([]string, 2+r.IntN(3))
	for j := range desc {
		desc[j] = word()
	}
	w := word()
	return Spec{
		Name: fmt.Sprintf("%s-%05d", w, i), Version: fmt.Sprintf("1.%d.0", r.IntN(5)),
		Title: strings.ToUpper(w[:1]) + w[1:] + " helper", Description: strings.Join(desc, " "),
		Keywords: []string{word()}, Tools: []string{"state.create", word() + "_lookup"},
	}, i % 64
}

// SeedKey is the secret key of generated author a (deterministic).
func SeedKey(a int) string {
	sum := sha256.Sum256([]byte(fmt.Sprintf("agentnode registry bench author %d", a)))
	return hex.EncodeToString(sum[:])
}

// SeededRelay opens a relay holding n generated packages (SeedSpec 0..n-1),
// published through the relay's own Publish. The data directory is cached
// in the system temp dir across runs (and -count): seeding happens once
// (v2: the files are signed by their authors, as the index requires).
func SeededRelay(tb testing.TB, n int) *relay.Relay {
	tb.Helper()
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("agentnode-registry-seed-%d-v2", n))
	marker := filepath.Join(dir, "SEEDED")
	if _, err := os.Stat(marker); err != nil {
		os.RemoveAll(dir)
		seed(tb, dir, n)
		if err := os.WriteFile(marker, nil, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	return OpenRelayAt(tb, dir)
}

// seed publishes n packages into a relay over dir and closes it.
func seed(tb testing.TB, dir string, n int) {
	rel, err := relay.Open(context.Background(), relay.Config{DataDir: dir, Version: "seed"})
	if err != nil {
		tb.Fatal(err)
	}
	defer rel.Close(context.Background())
	evts := make(chan *nostr.Event, 256)
	errs := make(chan error, 8)
	var wg sync.WaitGroup
	for range 8 { // concurrent publishers let the relay group its commits
		wg.Add(1)
		go func() {
			defer wg.Done()
			for evt := range evts {
				if err := rel.Publish(context.Background(), evt); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for i := range n {
		s, a := SeedSpec(i)
		evt, err := Event(s, SeedKey(a), 1_700_000_000+int64(i))
		if err != nil {
			close(evts)
			wg.Wait()
			tb.Fatal(err)
		}
		evts <- evt
	}
	close(evts)
	wg.Wait()
	select {
	case err := <-errs:
		tb.Fatal(err)
	default:
	}
}
