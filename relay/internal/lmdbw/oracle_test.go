package lmdbw

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"strings"
	"testing"

	eslmdb "github.com/fiatjaf/eventstore/lmdb"
	"github.com/nbd-wtf/go-nostr"
)

// The oracle: eventstore/lmdb v0.17.2's own QueryEvents reading a store
// in a child process (this test binary, run for TestEventstoreOracle).
// A child, because a process must not open one LMDB environment twice and
// eventstore's query ends its read transaction after it has closed its
// channel, so its backend cannot be closed safely in this process.

const (
	oracleDirEnv     = "LMDBW_ORACLE_DIR"
	oracleFiltersEnv = "LMDBW_ORACLE_FILTERS"
	oracleLine       = "oracle: "
)

// eventstoreQuery answers each filter with eventstore's QueryEvents on
// the closed store in dir.
func eventstoreQuery(t *testing.T, dir string, filters []nostr.Filter) [][]*nostr.Event {
	t.Helper()
	fj, err := json.Marshal(filters)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestEventstoreOracle$", "-test.count=1")
	cmd.Env = append(os.Environ(), oracleDirEnv+"="+dir, oracleFiltersEnv+"="+string(fj))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("eventstore oracle: %v\n%s%s", err, out, stderr.String())
	}
	var answers [][]*nostr.Event
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), oracleLine)
		if !ok {
			continue
		}
		var evts []*nostr.Event
		if err := json.Unmarshal([]byte(line), &evts); err != nil {
			t.Fatalf("eventstore oracle: %v in %q", err, line)
		}
		answers = append(answers, evts)
	}
	if len(answers) != len(filters) {
		t.Fatalf("eventstore oracle: %d answers for %d filters\n%s%s", len(answers), len(filters), out, stderr.String())
	}
	return answers
}

// TestEventstoreOracle is the child of eventstoreQuery; run alone it skips.
// It exits without closing the backend (see above).
func TestEventstoreOracle(t *testing.T) {
	dir := os.Getenv(oracleDirEnv)
	if dir == "" {
		t.Skip("the child process of eventstoreQuery")
	}
	if err := answerFilters(dir, os.Getenv(oracleFiltersEnv), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	os.Exit(0)
}

// answerFilters writes one oracle line per filter: its events as JSON.
func answerFilters(dir, filtersJSON string, out io.Writer) error {
	var filters []nostr.Filter
	if err := json.Unmarshal([]byte(filtersJSON), &filters); err != nil {
		return err
	}
	log.SetOutput(io.Discard)
	b := &eslmdb.LMDBBackend{Path: dir}
	if err := b.Init(); err != nil {
		return err
	}
	for _, f := range filters {
		ch, err := b.QueryEvents(context.Background(), f)
		if err != nil {
			return err
		}
		evts := []*nostr.Event{}
		for evt := range ch {
			evts = append(evts, evt)
		}
		j, err := json.Marshal(evts)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%s%s\n", oracleLine, j)
	}
	return nil
}
