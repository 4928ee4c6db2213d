package replicate_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip44"

	"github.com/agentnode/agentnode/agentd/state"
	"github.com/agentnode/agentnode/agentd/state/replicate"
)

const converge = 20 * time.Second

// editConcurrently makes rounds of edits of the same note on both nodes at
// once: each sets the title, inserts into the body and adds a tag.
func editConcurrently(t *testing.T, a, b *node, ca, cb state.Caller, uri string, rounds int) {
	var wg sync.WaitGroup
	for _, side := range []struct {
		n    *node
		c    state.Caller
		name string
	}{{a, ca, "a"}, {b, cb, "b"}} {
		wg.Go(func() {
			for i := range rounds {
				side.n.update(side.c, uri, id1, fmt.Sprintf(
					`[{"op":"replace","path":"/title","value":"from %[1]s %[2]d"},{"op":"add","path":"/tags/-","value":"%[1]s%[2]d"}]`, side.name, i))
				appendBody(t, side.n, side.c, uri, fmt.Sprintf(" %s%d", side.name, i))
			}
		})
	}
	wg.Wait()
}

// appendBody appends text to the note's body: read, then replace with a
// JSON Patch "test" of the text read, so that a remote edit applied in
// between makes it CONFLICT (and retry) instead of being overwritten.
func appendBody(t *testing.T, n *node, c state.Caller, uri, text string) {
	for {
		d, err := n.rt.Get(context.Background(), c, uri, id1)
		if err != nil {
			t.Error(err)
			return
		}
		body := object(t, string(d.Object))["body"].(string)
		_, err = n.rt.Update(context.Background(), c, uri, id1, []byte(fmt.Sprintf(
			`[{"op":"test","path":"/body","value":%q},{"op":"replace","path":"/body","value":%q}]`, body, body+text)))
		var se *state.Error
		if errors.As(err, &se) && se.Code == state.CodeConflict {
			continue
		}
		if err != nil {
			t.Error(err)
		}
		return
	}
}

// checkMerged: both nodes hold the same document, with every tag and every
// body insertion of both sides.
func checkMerged(t *testing.T, a, b *node, ca, cb state.Caller, uri string, rounds int) {
	t.Helper()
	eventually(t, converge, "the nodes to converge", func() bool {
		da, db := a.get(ca, uri, id1), b.get(cb, uri, id1)
		if da == "" || da != db {
			return false
		}
		tags := object(t, da)["tags"].([]any)
		return len(tags) == 1+2*rounds
	})
	o := object(t, a.get(ca, uri, id1))
	body := o["body"].(string)
	for _, side := range []string{"a", "b"} {
		for i := range rounds {
			if !strings.Contains(body, fmt.Sprintf(" %s%d", side, i)) {
				t.Fatalf("body %q lacks %s%d", body, side, i)
			}
		}
	}
	if title := o["title"].(string); title != fmt.Sprintf("from a %d", rounds-1) && title != fmt.Sprintf("from b %d", rounds-1) {
		t.Fatalf("title %q is not one of the last writes", title)
	}
}

// Two nodes on loopback, each with its own relay and its own SQLite file,
// each replicator connected over websocket (with NIP-42 AUTH) to both
// relays, edit the same note concurrently and converge. Every op travels
// twice (once per relay); the second copy is recognised and ignored.
func TestReplicator_TwoNodesConverge(t *testing.T) {
	owner := newKey()
	t.Run("same agent on two nodes, private note", func(t *testing.T) {
		agent := newKey()
		dir := replicate.StaticDirectory{owner.pk: {agent.pk}}
		r1, r2 := openRelay(t), openRelay(t)
		a := startNode(t, nodeConfig{agent: agent, owner: owner, dir: dir, relays: []*testRelay{r1, r2}})
		b := startNode(t, nodeConfig{agent: agent, owner: owner, dir: dir, relays: []*testRelay{r1, r2}})
		c := caller(agent, owner, capNote)
		twoNodes(t, a, b, c, c, noteURI)
	})
	t.Run("sibling agents, shared note", func(t *testing.T) {
		agentA, agentB := newKey(), newKey()
		dir := replicate.StaticDirectory{owner.pk: {agentA.pk, agentB.pk}}
		r1, r2 := openRelay(t), openRelay(t)
		a := startNode(t, nodeConfig{agent: agentA, owner: owner, dir: dir, relays: []*testRelay{r1, r2}})
		b := startNode(t, nodeConfig{agent: agentB, owner: owner, dir: dir, relays: []*testRelay{r1, r2}})
		twoNodes(t, a, b, caller(agentA, owner, capTeam), caller(agentB, owner, capTeam), teamURI)
	})
}

func twoNodes(t *testing.T, a, b *node, ca, cb state.Caller, uri string) {
	if _, err := a.rt.Create(context.Background(), ca, uri, note(id1, "draft", "The quick fox.", "x")); err != nil {
		t.Fatal(err)
	}
	eventually(t, converge, "the note to reach b", func() bool { return b.get(cb, uri, id1) != "" })
	const rounds = 5
	editConcurrently(t, a, b, ca, cb, uri, rounds)
	checkMerged(t, a, b, ca, cb, uri, rounds)
	for _, n := range []*node{a, b} {
		if s := n.rep.Stats(); s.Skipped != 0 || s.Published == 0 || s.Applied == 0 {
			t.Fatalf("stats %+v", s)
		}
	}
}

// A third node with another key (and another owner) follows the same
// relays. The relays refuse it kind 4290 without AUTH and serve it none of
// the private events with AUTH; the raw events (read in-process from a
// relay's store) do not decrypt with its key. Public state reaches it in
// plaintext.
func TestReplicator_StrangerCannotRead(t *testing.T) {
	owner, agent := newKey(), newKey()
	dir := replicate.StaticDirectory{owner.pk: {agent.pk}}
	r1, r2 := openRelay(t), openRelay(t)
	a := startNode(t, nodeConfig{agent: agent, owner: owner, dir: dir, relays: []*testRelay{r1, r2}})
	b := startNode(t, nodeConfig{agent: agent, owner: owner, dir: dir, relays: []*testRelay{r1, r2}})
	stranger, strangerOwner := newKey(), newKey()
	s := startNode(t, nodeConfig{agent: stranger, owner: strangerOwner, relays: []*testRelay{r1, r2},
		dir: replicate.StaticDirectory{owner.pk: {agent.pk}}, follow: []string{agent.pk}})

	ctx := context.Background()
	c := caller(agent, owner, capNote)
	if _, err := a.rt.Create(ctx, c, noteURI, note(id1, "secret", "private body", "p")); err != nil {
		t.Fatal(err)
	}
	a.update(c, noteURI, id1, `[{"op":"replace","path":"/title","value":"still secret"}]`)
	eventually(t, converge, "the private note to reach b", func() bool {
		return strings.Contains(b.get(c, noteURI, id1), "still secret")
	})
	// A public document after the private ones: once the stranger has it,
	// its pulls have run over everything the relays hold.
	cb := caller(agent, owner, capBoard)
	if _, err := a.rt.Create(ctx, cb, boardURI, note(id1, "hello world", "public body")); err != nil {
		t.Fatal(err)
	}
	sc := caller(stranger, strangerOwner, capBoard)
	eventually(t, converge, "the public note to reach the stranger", func() bool { return s.get(sc, boardURI, id1) != "" })

	if got := s.get(caller(stranger, owner, capNote), noteURI, id1); got != "" {
		t.Fatalf("the stranger has the private note: %s", got)
	}
	if envs, _ := s.rt.Store().OpsSince(ctx, "cap_note", 0, 100); len(envs) != 0 {
		t.Fatalf("the stranger's store holds %d private ops", len(envs))
	}
	for _, tr := range []*testRelay{r1, r2} {
		eventually(t, converge, "the public event on every relay", func() bool {
			evts, err := tr.QuerySync(ctx, nostr.Filter{Kinds: []int{replicate.Kind}, Authors: []string{agent.pk},
				Tags: nostr.TagMap{"v": {"public"}}})
			return err == nil && len(evts) > 0
		})
		strangerOnTheWire(t, tr, stranger, agent)
		rawEventsDoNotOpen(t, tr, stranger, agent)
	}
}

// strangerOnTheWire: REQ for 4290 without AUTH is CLOSED auth-required;
// with AUTH as the stranger only the public events come back.
func strangerOnTheWire(t *testing.T, tr *testRelay, stranger, agent key) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := nostr.RelayConnect(ctx, tr.URL)
	if err != nil {
		t.Fatal(err)
	}
	// go-nostr's client, as a stranger's would be. Not closed here: its
	// Close still races its writer goroutine in v0.52.3 (relay.go:175 vs
	// :576; docs/PEERS.md); the relay's cleanup cuts it.
	sub, err := conn.Subscribe(ctx, nostr.Filters{{Kinds: []int{replicate.Kind}}})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case reason := <-sub.ClosedReason:
		if !strings.HasPrefix(reason, "auth-required: ") {
			t.Fatalf("CLOSED %q", reason)
		}
	case evt, ok := <-sub.Events:
		if ok {
			t.Fatalf("served %s without AUTH", evt.ID)
		}
		if reason := <-sub.ClosedReason; !strings.HasPrefix(reason, "auth-required: ") { // sent before Events closes
			t.Fatalf("CLOSED %q", reason)
		}
	case <-sub.EndOfStoredEvents:
		t.Fatal("EOSE without AUTH")
	case <-ctx.Done():
		t.Fatal("no answer")
	}
	if err := conn.Auth(ctx, func(e *nostr.Event) error { return e.Sign(stranger.sk) }); err != nil {
		t.Fatal(err)
	}
	for _, f := range []nostr.Filter{
		{Kinds: []int{replicate.Kind}},
		{Kinds: []int{replicate.Kind}, Tags: nostr.TagMap{"p": {agent.pk}}},
		{Authors: []string{agent.pk}},
	} {
		evts, err := conn.QuerySync(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		for _, evt := range evts {
			if evt.PubKey == stranger.pk {
				continue // its own (its core models)
			}
			if evt.Tags.Find("p") != nil || evt.Tags.Find("v")[1] != "public" {
				t.Fatalf("served a private event to the stranger: %v", evt.Tags)
			}
		}
	}
}

// rawEventsDoNotOpen: every private event in the relay's store is
// ciphertext the stranger's key cannot open; the public ones are plain
// JSON without p tags.
func rawEventsDoNotOpen(t *testing.T, tr *testRelay, stranger, agent key) {
	t.Helper()
	evts, err := tr.QuerySync(context.Background(), nostr.Filter{Kinds: []int{replicate.Kind}})
	if err != nil {
		t.Fatal(err)
	}
	private, public := 0, 0
	for _, evt := range evts {
		if evt.PubKey != agent.pk {
			continue // the stranger's own
		}
		if evt.Tags.Find("v")[1] == "public" {
			public++
			var envs []json.RawMessage
			if evt.Tags.Find("p") != nil || json.Unmarshal([]byte(evt.Content), &envs) != nil || len(envs) == 0 {
				t.Fatalf("public event is not plaintext envelopes: %v %.80s", evt.Tags, evt.Content)
			}
			continue
		}
		private++
		if p := evt.Tags.Find("p"); p == nil || p[1] == stranger.pk {
			t.Fatalf("private event tags %v", evt.Tags)
		}
		if strings.Contains(evt.Content, "secret") || json.Valid([]byte(evt.Content)) {
			t.Fatalf("private event content is not ciphertext: %.80s", evt.Content)
		}
		ck, err := nip44.GenerateConversationKey(evt.PubKey, stranger.sk)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := nip44.Decrypt(evt.Content, ck); err == nil {
			t.Fatal("the stranger decrypted a private op event")
		}
	}
	if private == 0 || public == 0 {
		t.Fatalf("%d private and %d public events on the relay", private, public)
	}
}

// A replicator stopped while the other node edits catches up when it runs
// again (cursors persisted in state.db); one whose connections are cut
// reconnects and resumes.
func TestReplicator_ResumesAfterRestartAndReconnect(t *testing.T) {
	owner, agent := newKey(), newKey()
	dir := replicate.StaticDirectory{owner.pk: {agent.pk}}
	r1 := openRelay(t)
	a := startNode(t, nodeConfig{agent: agent, owner: owner, dir: dir, relays: []*testRelay{r1}})
	b := startNode(t, nodeConfig{agent: agent, owner: owner, dir: dir, relays: []*testRelay{r1}})
	c := caller(agent, owner, capNote)
	if _, err := a.rt.Create(context.Background(), c, noteURI, note(id1, "v1", "one")); err != nil {
		t.Fatal(err)
	}
	eventually(t, converge, "v1 on b", func() bool { return strings.Contains(b.get(c, noteURI, id1), `"v1"`) })

	b.halt()
	a.update(c, noteURI, id1, `[{"op":"replace","path":"/title","value":"v2"}]`)
	b.update(c, noteURI, id1, `[{"op":"add","path":"/tags/-","value":"offline"}]`)
	b.start()
	eventually(t, converge, "v2 and the offline edit on both", func() bool {
		da := a.get(c, noteURI, id1)
		return da == b.get(c, noteURI, id1) && strings.Contains(da, `"v2"`) && strings.Contains(da, "offline")
	})
	if b.rep.Stats().Applied == 0 {
		t.Fatal("the restarted replicator applied nothing")
	}
	eventually(t, converge, "b's push watermark for cap_note", func() bool {
		pushed, err := b.rt.Store().LoadSetting(context.Background(), "replicate:"+agent.pk+":push:"+r1.URL+":cap_note")
		return err == nil && pushed != ""
	})

	r1.Cut()
	a.update(c, noteURI, id1, `[{"op":"replace","path":"/title","value":"v3"}]`)
	eventually(t, converge, "v3 on b after the connections were cut", func() bool {
		return strings.Contains(b.get(c, noteURI, id1), `"v3"`)
	})
}

// One node reaches its own relay in-process (Local), the other over a
// websocket; they converge through that one relay.
func TestReplicator_InProcessRelay(t *testing.T) {
	owner, agent := newKey(), newKey()
	dir := replicate.StaticDirectory{owner.pk: {agent.pk}}
	r1 := openRelay(t)
	a := startNode(t, nodeConfig{agent: agent, owner: owner, dir: dir, local: r1})
	b := startNode(t, nodeConfig{agent: agent, owner: owner, dir: dir, relays: []*testRelay{r1}})
	c := caller(agent, owner, capNote)
	if _, err := a.rt.Create(context.Background(), c, noteURI, note(id1, "draft", "The quick fox.", "x")); err != nil {
		t.Fatal(err)
	}
	eventually(t, converge, "the note on b", func() bool { return b.get(c, noteURI, id1) != "" })
	const rounds = 3
	editConcurrently(t, a, b, c, c, noteURI, rounds)
	checkMerged(t, a, b, c, c, noteURI, rounds)
}

// Events that are malformed, undecryptable, untrusted or mismatched are
// skipped and counted; a good event after them still applies.
func TestReplicator_SkipsBadEvents(t *testing.T) {
	owner, agent, intruder := newKey(), newKey(), newKey()
	dir := replicate.StaticDirectory{owner.pk: {agent.pk}}
	r1 := openRelay(t)
	b := startNode(t, nodeConfig{agent: agent, owner: owner, dir: dir, relays: []*testRelay{r1}})
	c := caller(agent, owner, capNote)

	// Ops for b's owner's note, made on another runtime.
	src := startNode(t, nodeConfig{agent: agent, owner: owner, dir: dir, local: openRelay(t)})
	if _, err := src.rt.Create(context.Background(), c, noteURI, note(id1, "good", "body")); err != nil {
		t.Fatal(err)
	}
	envs, err := src.rt.Store().OpsSince(context.Background(), "cap_note", 0, 100)
	if err != nil || len(envs) == 0 {
		t.Fatal(envs, err)
	}
	for i := range envs {
		envs[i].Seq = 0
	}
	batch, _ := json.Marshal(envs)
	tags := func(vis string) nostr.Tags {
		return nostr.Tags{{"scope", "sc:test"}, {"schema", noteURI}, {"ns", "cap_note"}, {"v", vis},
			{"owner", owner.pk}, {"replica", string(src.rt.Store().Replica())}}
	}
	encrypted := func(from key, to string, plain string) *nostr.Event {
		ck, _ := nip44.GenerateConversationKey(to, from.sk)
		ct, _ := nip44.Encrypt(plain, ck)
		evt := &nostr.Event{Kind: replicate.Kind, CreatedAt: nostr.Now(), Tags: append(tags("private"), nostr.Tag{"p", to}), Content: ct}
		evt.Sign(from.sk)
		return evt
	}
	otherScope := strings.ReplaceAll(string(batch), `"scope":"sc:test"`, `"scope":"sc:other"`)
	bad := []*nostr.Event{
		encrypted(intruder, agent.pk, string(batch)), // untrusted author
		encrypted(agent, agent.pk, otherScope),       // envelopes not of the tagged scope
		encrypted(agent, agent.pk, "not json"),       // not a batch
		func() *nostr.Event { // garbage ciphertext
			evt := &nostr.Event{Kind: replicate.Kind, CreatedAt: nostr.Now(), Tags: append(tags("private"), nostr.Tag{"p", agent.pk}), Content: "AgAAAA=="}
			evt.Sign(agent.sk)
			return evt
		}(),
	}
	for _, evt := range bad {
		if err := r1.Publish(context.Background(), evt); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, converge, "the bad events to be skipped", func() bool { return b.rep.Stats().Skipped >= int64(len(bad)) })
	if got := b.get(c, noteURI, id1); got != "" {
		t.Fatalf("a bad event was applied: %s", got)
	}
	if err := r1.Publish(context.Background(), encrypted(agent, agent.pk, string(batch))); err != nil {
		t.Fatal(err)
	}
	eventually(t, converge, "the good event to apply", func() bool { return strings.Contains(b.get(c, noteURI, id1), `"good"`) })
	if s := b.rep.Stats(); s.Skipped != int64(len(bad)) {
		t.Fatalf("stats %+v", s)
	}
}

func TestNew_RefusesBadConfig(t *testing.T) {
	rt, err := state.Open(context.Background(), state.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(context.Background())
	k := newKey()
	good := replicate.Config{SecretKey: k.sk, Owner: k.pk, Directory: replicate.StaticDirectory{}, Schemas: rt.Schemas(),
		Links: []replicate.Link{{Name: "x"}}}
	for name, mutate := range map[string]func(*replicate.Config){
		"secret key":     func(c *replicate.Config) { c.SecretKey = "nope" },
		"owner":          func(c *replicate.Config) { c.Owner = "nope" },
		"directory":      func(c *replicate.Config) { c.Directory = nil },
		"no links":       func(c *replicate.Config) { c.Links = nil },
		"duplicate link": func(c *replicate.Config) { c.Links = append(c.Links, replicate.Link{Name: "x"}) },
	} {
		cfg := good
		cfg.Links = slices.Clone(good.Links)
		mutate(&cfg)
		if _, err := replicate.New(rt.Store(), cfg); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := replicate.New(rt.Store(), good); err != nil {
		t.Fatal(err)
	}
}

// Local.Subscribe wakes up when the relay announces a stored event
// (relay.Relay.OnStored), long before its next poll.
func TestLocal_WakesOnStored(t *testing.T) {
	tr := openRelay(t)
	if _, ok := any(tr.Relay).(interface {
		OnStored(func(*nostr.Event)) func()
	}); !ok {
		t.Skip("the relay does not announce stored events")
	}
	reader := newKey()
	local := &replicate.Local{Relay: tr.Relay, Poll: time.Hour}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan string, 4)
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- local.Subscribe(ctx, nostr.Filters{{Kinds: []int{replicate.Kind}, Tags: nostr.TagMap{"p": {reader.pk}}}},
			func(evt *nostr.Event) { got <- evt.ID }, func() { close(ready) })
	}()
	<-ready
	author := newKey()
	other := &nostr.Event{Kind: 1, CreatedAt: nostr.Now(), Content: "not for the subscription"}
	other.Sign(author.sk)
	evt := &nostr.Event{Kind: replicate.Kind, CreatedAt: nostr.Now(), Tags: nostr.Tags{{"v", "private"}, {"p", reader.pk}}, Content: "x"}
	evt.Sign(author.sk)
	for _, e := range []*nostr.Event{other, evt} {
		if err := tr.Publish(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case id := <-got:
		if id != evt.ID {
			t.Fatalf("got %s", id)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no wake-up")
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
}
