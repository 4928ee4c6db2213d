package hostile

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/internal/pgtest"
	"github.com/agentnode/agentnode/internal/relayclient"
)

// opsCorpus publishes a mixed store to n: notes of three authors (forty of
// them sharing one created_at), replaceable profiles replaced once,
// addressable events, and a NIP-09 deletion of one note. It returns the
// authors' public keys.
func opsCorpus(t *testing.T, n *node) []string {
	t.Helper()
	c := n.client(t)
	var authors []string
	now := nostr.Now()
	for a := range 3 {
		sk := nostr.GeneratePrivateKey()
		pk, _ := nostr.GetPublicKey(sk)
		authors = append(authors, pk)
		var first *nostr.Event
		for i := range 60 {
			at := now - nostr.Timestamp(1000+i)
			if i < 40 && a == 0 {
				at = now - 5000 // many events in one second
			}
			evt := opsSign(t, sk, 1, nostr.Tags{{"t", fmt.Sprint("topic", i%4)}}, fmt.Sprint("note ", a, " ", i), at)
			opsPublish(t, c, evt)
			if first == nil {
				first = evt
			}
		}
		for v := range 2 {
			opsPublish(t, c, opsSign(t, sk, 0, nil, fmt.Sprintf(`{"name":"author %d v%d"}`, a, v), now-nostr.Timestamp(10-v)))
			opsPublish(t, c, opsSign(t, sk, 30078, nostr.Tags{{"d", "settings"}}, fmt.Sprint("v", v), now-nostr.Timestamp(10-v)))
		}
		opsPublish(t, c, opsSign(t, sk, 5, nostr.Tags{{"e", first.ID}}, "", now))
	}
	publishDefinitions(t, n, 30, 100) // searchable (NIP-50)
	opsLessons(t, n, c)
	return authors
}

// opsLessons publishes lessons (kind 4129) on three definitions, the
// bench's "lessons of a definition" shape.
func opsLessons(t *testing.T, n *node, c *relayclient.Conn) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	defs, err := c.Query(ctx, nostr.Filters{{Kinds: []int{4199}, Limit: 3}})
	if err != nil || len(defs) != 3 {
		t.Fatalf("definitions: %d, %v", len(defs), err)
	}
	sk := nostr.GeneratePrivateKey()
	for i, def := range defs {
		for j := range 5 {
			tags := nostr.Tags{{"title", fmt.Sprint("Lesson ", i, j)}, {"category", "pattern"}, {"e", def.ID}}
			opsPublish(t, c, opsSign(t, sk, 4129, tags, fmt.Sprint("what was learnt ", i, j), nostr.Now()-nostr.Timestamp(j)))
		}
	}
}

func opsSign(t *testing.T, sk string, kind int, tags nostr.Tags, content string, at nostr.Timestamp) *nostr.Event {
	t.Helper()
	evt := &nostr.Event{Kind: kind, Tags: tags, Content: content, CreatedAt: at}
	if err := evt.Sign(sk); err != nil {
		t.Fatal(err)
	}
	return evt
}

func opsPublish(t *testing.T, c *relayclient.Conn, evt *nostr.Event) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := c.Publish(ctx, evt); err != nil {
		t.Fatalf("publish kind %d: %v", evt.Kind, err)
	}
}

// opsQueries are the filters whose answers must survive an export and an
// import: everything, by kind, by author, by tag, by d tag, paged.
func opsQueries(authors []string) []nostr.Filter {
	until := nostr.Now() - 4000
	return []nostr.Filter{
		{Limit: 1000},
		{Kinds: []int{1}, Limit: 1000},
		{Kinds: []int{0}, Limit: 10},
		{Kinds: []int{5}, Limit: 10},
		{Authors: authors[:1], Limit: 1000},
		{Authors: authors[1:], Kinds: []int{1}, Limit: 25},
		{Tags: nostr.TagMap{"t": {"topic1"}}, Limit: 1000},
		{Kinds: []int{30078}, Tags: nostr.TagMap{"d": {"settings"}}, Limit: 10},
		{Until: &until, Limit: 1000},
		{Kinds: []int{4199}, Search: "definition", Limit: 100},
		{Kinds: []int{4199}, Search: "definition", Limit: 20}, // the bench's search shape
		{Kinds: []int{4129}, Limit: 100},                      // lessons
	}
}

// answers runs every query on n and returns the ids of each answer, in
// the relay's order.
func answers(t *testing.T, n *node, filters []nostr.Filter) [][]string {
	t.Helper()
	c := n.client(t)
	var out [][]string
	for _, f := range filters {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		evts, err := c.Query(ctx, nostr.Filters{f})
		cancel()
		if err != nil {
			t.Fatalf("query %v: %v", f, err)
		}
		ids := make([]string, 0, len(evts))
		for _, e := range evts {
			ids = append(ids, e.ID)
		}
		out = append(out, ids)
	}
	return out
}

// exportedIDs reads a JSONL export's event ids, sorted.
func exportedIDs(t *testing.T, jsonl []byte) []string {
	t.Helper()
	var ids []string
	sc := bufio.NewScanner(bytes.NewReader(jsonl))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var evt nostr.Event
		if err := json.Unmarshal(sc.Bytes(), &evt); err != nil {
			t.Fatalf("export line %q: %v", sc.Text(), err)
		}
		if ok, _ := evt.CheckSignature(); !ok {
			t.Fatalf("exported event %s does not verify", evt.ID)
		}
		ids = append(ids, evt.ID)
	}
	slices.Sort(ids)
	return ids
}

func TestExportImport_freshNodeAnswersTheSame(t *testing.T) {
	a := startNode(t, nil)
	authors := opsCorpus(t, a)
	want := answers(t, a, opsQueries(authors))

	// Export while a runs, from its data directory and over its URL.
	dump := filepath.Join(t.TempDir(), "events.jsonl")
	if out, err := runCLI(t, a, "export", "--data", a.data, "--out", dump); err != nil {
		t.Fatalf("export --data: %v\n%s", err, out)
	}
	fromDir, _ := os.ReadFile(dump)
	fromURL, err := runCLI(t, a, "export", "--url", a.url)
	if err != nil {
		t.Fatalf("export --url: %v\n%s", err, fromURL)
	}
	dirIDs, urlIDs := exportedIDs(t, fromDir), exportedIDs(t, fromURL)
	if !slices.Equal(dirIDs, urlIDs) {
		t.Fatalf("export --data wrote %d events, export --url %d: they differ", len(dirIDs), len(urlIDs))
	}
	stored := append([]string(nil), want[0]...)
	slices.Sort(stored)
	if !slices.Equal(dirIDs, stored) {
		t.Fatalf("export wrote %d events; the node stores %d", len(dirIDs), len(stored))
	}

	fresh := t.TempDir()
	if out, err := runCLI(t, a, "import", dump, "--data", fresh); err != nil {
		t.Fatalf("import: %v\n%s", err, out)
	}
	b := launchNode(t, launch{data: fresh, config: map[string]any{}})
	sameAnswers(t, "the imported node", authors, answers(t, b, opsQueries(authors)), want)
}

// sameAnswers compares each query's answer with want's: the same events
// in the same order (NIP-50 search: the same events, in the backend's own
// order; when more events match than the limit, the same number: which
// rank first is the index's own order).
func sameAnswers(t *testing.T, who string, authors []string, got, want [][]string) {
	t.Helper()
	for i, f := range opsQueries(authors) {
		g, w := got[i], want[i]
		if f.Search != "" && len(w) == f.Limit && len(g) == f.Limit {
			// more matches than the limit: which ones rank first is the
			// index's own order, and on one backend too (bluge breaks equal
			// scores by its internal document order, which an import changes)
			continue
		}
		if f.Search != "" {
			g, w = slices.Sorted(slices.Values(g)), slices.Sorted(slices.Values(w))
		}
		if len(w) == 0 || !slices.Equal(g, w) {
			t.Errorf("filter %v: %s answers %d events, the original %d (or other ones, or in another order)", f, who, len(g), len(w))
		}
	}
}

// TestExportImport_postgresAnswersTheSame: an LMDB node's export imported
// into PostgreSQL (the migration in docs/OPERATIONS.md) gives a node on
// that database the same answers; exporting it back (--postgres, and
// --url of the running node) gives the same events.
func TestExportImport_postgresAnswersTheSame(t *testing.T) {
	a := startNode(t, nil)
	authors := opsCorpus(t, a)
	want := answers(t, a, opsQueries(authors))
	dump := filepath.Join(t.TempDir(), "events.jsonl")
	if out, err := runCLI(t, a, "export", "--data", a.data, "--out", dump); err != nil {
		t.Fatalf("export: %v\n%s", err, out)
	}
	url := pgtest.URL(t)
	if out, err := runCLI(t, a, "import", dump, "--postgres", url); err != nil {
		t.Fatalf("import --postgres: %v\n%s", err, out)
	}
	b := startNodeWith(t, map[string]any{"postgres": map[string]any{"url": url}})
	sameAnswers(t, "the PostgreSQL node", authors, answers(t, b, opsQueries(authors)), want)

	fromDir, _ := os.ReadFile(dump)
	fromPG, err := runCLI(t, b, "export", "--postgres", url)
	if err != nil {
		t.Fatalf("export --postgres: %v\n%s", err, fromPG)
	}
	fromURL, err := runCLI(t, b, "export", "--url", b.url)
	if err != nil {
		t.Fatalf("export --url: %v\n%s", err, fromURL)
	}
	lmdb := exportedIDs(t, fromDir)
	if pg := exportedIDs(t, fromPG); !slices.Equal(pg, lmdb) {
		t.Errorf("export --postgres wrote %d events, the LMDB export %d: they differ", len(pg), len(lmdb))
	}
	if pg := exportedIDs(t, fromURL); !slices.Equal(pg, lmdb) {
		t.Errorf("export --url of the PostgreSQL node wrote %d events, the LMDB export %d: they differ", len(pg), len(lmdb))
	}
}

func TestExport_filters(t *testing.T) {
	a := startNode(t, nil)
	authors := opsCorpus(t, a)
	filter := fmt.Sprintf(`{"authors":[%q]}`, authors[1])
	out, err := runCLI(t, a, "export", "--data", a.data, "--filter", filter, "--kinds", "0,30078")
	if err != nil {
		t.Fatalf("export: %v\n%s", err, out)
	}
	if got := len(exportedIDs(t, out)); got != 2 { // the newest profile and the newest settings
		t.Fatalf("export of author 1's kinds 0 and 30078 wrote %d events, want 2:\n%s", got, out)
	}
	if out, err := runCLI(t, a, "export", "--kinds", "one"); err == nil || !strings.Contains(string(out), `"one" is not a kind`) {
		t.Fatalf("export --kinds one: %v\n%s", err, out)
	}
}

func TestImport_reportsEachRefusalWithItsReason(t *testing.T) {
	sk := nostr.GeneratePrivateKey()
	good := opsSign(t, sk, 1, nil, "fine", nostr.Now())
	forged := opsSign(t, sk, 1, nil, "forged", nostr.Now())
	forged.Content = "tampered"
	future := opsSign(t, sk, 1, nil, "from the future", nostr.Now()+86400*365)
	var in bytes.Buffer
	for _, e := range []*nostr.Event{good, forged, future} {
		b, _ := json.Marshal(e)
		in.Write(append(b, '\n'))
	}
	in.WriteString("not json\n\n")
	in.WriteString(strings.Repeat("x", 2<<20) + "\n")
	b, _ := json.Marshal(good)
	in.Write(b) // a last line without a newline: a duplicate, stored silently

	path := filepath.Join(t.TempDir(), "in.jsonl")
	os.WriteFile(path, in.Bytes(), 0o600)
	data := t.TempDir()
	out, err := runCLI(t, nil, "import", path, "--data", data)
	if err == nil {
		t.Fatalf("import of refused lines succeeded:\n%s", out)
	}
	for _, want := range []string{
		"line 2: " + forged.ID + ": invalid:",
		"line 3: " + future.ID + ": invalid:",
		"line 4: unreadable: not a JSON event",
		"line 6: unreadable: line longer than",
		"imported 2 of 6 lines: 2 refused (invalid 2), 2 unreadable",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("import output lacks %q:\n%s", want, out)
		}
	}
	n := launchNode(t, launch{data: data, config: map[string]any{}})
	ids := answers(t, n, []nostr.Filter{{Limit: 100}})[0]
	if !slices.Equal(ids, []string{good.ID}) {
		t.Fatalf("the node stores %v, want only %s", ids, good.ID)
	}
}

// TestImport_intoARunningNode: import --url publishes into a running node
// and reports its refusals; import --data on that node's directory is
// refused with a pointer to --url.
func TestImport_intoARunningNode(t *testing.T) {
	n := startNode(t, nil)
	sk := nostr.GeneratePrivateKey()
	var in bytes.Buffer
	var want []string
	for i := range 50 {
		e := opsSign(t, sk, 1, nil, fmt.Sprint("imported ", i), nostr.Now()-nostr.Timestamp(i))
		want = append(want, e.ID)
		b, _ := json.Marshal(e)
		in.Write(append(b, '\n'))
	}
	forged := opsSign(t, sk, 1, nil, "forged", nostr.Now())
	forged.Sig = strings.Repeat("0", 128)
	b, _ := json.Marshal(forged)
	in.Write(append(b, '\n'))
	path := filepath.Join(t.TempDir(), "in.jsonl")
	os.WriteFile(path, in.Bytes(), 0o600)

	out, err := runCLI(t, n, "import", path, "--url", n.url)
	if err == nil || !strings.Contains(string(out), "line 51: "+forged.ID+": invalid:") ||
		!strings.Contains(string(out), "imported 50 of 51 lines: 1 refused (invalid 1), 0 unreadable") {
		t.Fatalf("import --url: %v\n%s", err, out)
	}
	ids := storedIDs(t, n, nostr.Filter{Authors: []string{forged.PubKey}, Limit: 100})
	for _, id := range want {
		if !ids[id] {
			t.Fatalf("event %s imported over the URL is not stored (%d stored)", id, len(ids))
		}
	}
	if out, err := runCLI(t, n, "import", path, "--data", n.data); err == nil || !strings.Contains(string(out), "data dir in use") || !strings.Contains(string(out), "--url") {
		t.Fatalf("import --data into a running node's directory: %v\n%s", err, out)
	}
}

// TestImport_enforcesTheConfigsLimits: with --config the import refuses
// what the node's relay section refuses (here, more than 3 tags).
func TestImport_enforcesTheConfigsLimits(t *testing.T) {
	sk := nostr.GeneratePrivateKey()
	tagged := opsSign(t, sk, 1, nostr.Tags{{"t", "a"}, {"t", "b"}, {"t", "c"}, {"t", "d"}, {"t", "e"}}, "five tags", nostr.Now())
	b, _ := json.Marshal(tagged)
	dir := t.TempDir()
	path, config := filepath.Join(dir, "in.jsonl"), filepath.Join(dir, "config.json")
	os.WriteFile(path, append(b, '\n'), 0o600)
	os.WriteFile(config, []byte(`{"relay": {"max_event_tags": 3}}`), 0o600)
	out, err := runCLI(t, nil, "import", path, "--data", t.TempDir(), "--config", config)
	if err == nil || !strings.Contains(string(out), "line 1: "+tagged.ID+": ") || !strings.Contains(string(out), "1 refused") {
		t.Fatalf("import --config with max_event_tags 3 of an event with 5 tags: %v\n%s", err, out)
	}
	if out, err := runCLI(t, nil, "import", path, "--data", t.TempDir()); err != nil {
		t.Fatalf("import with the default limits: %v\n%s", err, out)
	}
}
