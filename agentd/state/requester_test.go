package state_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/agentnode/agentnode/agentd/state"
)

// requesterRuntime is a runtime with a private, a shared and a public
// schema of capability vis, each holding document "d" of agent a1.
func requesterRuntime(t *testing.T) (*state.Runtime, state.Caller) {
	t.Helper()
	rt := openRuntime(t, "", state.Options{})
	const capVis = "did:nuwa:cap:vis@1.0.0"
	agent := caller(agentA1, owner1, capVis)
	for _, v := range []string{"private", "shared", "public"} {
		mustRegister(t, rt, capVis, fmt.Sprintf(`{"$id":"did:nuwa:state:%s#v1","type":"object","x-asm":{"x-visibility":%q},"properties":{"t":{"type":"string"}}}`, v, v))
		must[*state.Document](t)(rt.Create(context.Background(), agent, visURI(v), []byte(`{"id":"d","t":"agent's"}`)))
	}
	return rt, agent
}

func visURI(v string) string { return "did:nuwa:state:" + v + "#v1" }

// reads returns the ids caller c reads in the schema of visibility v
// (state.query), checking that state.get agrees for each id in ids.
func reads(t *testing.T, rt *state.Runtime, c state.Caller, v string, ids ...string) []string {
	t.Helper()
	ctx := context.Background()
	res, err := rt.Query(ctx, c, []byte(fmt.Sprintf(`{"from":%q}`, visURI(v))))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range res.Rows {
		got = append(got, r["id"].(string))
	}
	slices.Sort(got)
	for _, id := range ids {
		_, err := rt.Get(ctx, c, visURI(v), id)
		if seen := strings.Contains(strings.Join(got, ","), id); (err == nil) != seen {
			t.Errorf("%s/%s: get err %v, query sees it: %v", v, id, err, seen)
		}
	}
	return got
}

func TestRequester_DecisionTable(t *testing.T) {
	ctx := context.Background()
	rt, agent := requesterRuntime(t)
	stranger := requesterOf(agent, "r1")
	want := map[string]string{"private": "", "shared": "", "public": "d"}
	for v, w := range want {
		if got := strings.Join(reads(t, rt, stranger, v, "d"), ","); got != w {
			t.Errorf("a requester reads %s: %q, want %q", v, got, w)
		}
		_, err := rt.Create(ctx, stranger, visURI(v), []byte(`{"id":"r","t":"x"}`))
		wantCode(t, err, state.CodePermissionDenied)
		if !strings.Contains(err.Error(), "owner") {
			t.Errorf("refusal %q does not say who may", err)
		}
		_, err = rt.Update(ctx, stranger, visURI(v), "d", []byte(`{"$set":{"t":"y"}}`))
		wantCode(t, err, state.CodePermissionDenied)
		wantCode(t, rt.Delete(ctx, stranger, visURI(v), "d", "hard"), state.CodePermissionDenied)
	}
	// Core models: the agent's are private, whatever the requester asks.
	_, err := rt.Get(ctx, stranger, "did:nuwa:core:MemoryStore#v1", agentA1)
	wantCode(t, err, state.CodeNotFound)
	_, err = rt.Update(ctx, stranger, "did:nuwa:core:MemoryStore#v1", agentA1, []byte(`{"$set":{"items":{}}}`))
	wantCode(t, err, state.CodePermissionDenied)
	// The requester's memory is empty: the agent's is untouched.
	if _, err := rt.Get(ctx, agent, "did:nuwa:core:MemoryStore#v1", agentA1); err != nil {
		t.Fatalf("the agent's MemoryStore: %v", err)
	}
}

func TestRequester_OpenedWrite(t *testing.T) {
	ctx := context.Background()
	rt, agent := requesterRuntime(t)
	open := []state.Grant{{Schema: visURI("private"), Write: true}}
	a, b := requesterOf(agent, "ra"), requesterOf(agent, "rb")
	a.Open, b.Open = open, open
	doc := must[*state.Document](t)(rt.Create(ctx, a, visURI("private"), []byte(`{"id":"by-a","t":"a's"}`)))
	if doc.Owner != owner1 || doc.Agent != agentA1 || doc.Scope != "sc:test/rq:ra" {
		t.Errorf("a requester's document: %+v, want the agent's owner and agent, scope sc:test/rq:ra", doc)
	}
	if got := strings.Join(reads(t, rt, a, "private", "by-a", "d"), ","); got != "by-a" {
		t.Errorf("A reads %q, want its own write only", got)
	}
	if got := strings.Join(reads(t, rt, b, "private", "by-a", "d"), ","); got != "" {
		t.Errorf("B reads %q, want nothing (A's write is private)", got)
	}
	_, err := rt.Update(ctx, b, visURI("private"), "by-a", []byte(`{"$set":{"t":"b was here"}}`))
	wantCode(t, err, state.CodeNotFound)
	_, err = rt.Update(ctx, a, visURI("private"), "d", []byte(`{"$set":{"t":"a was here"}}`))
	wantCode(t, err, state.CodeNotFound)
	must[*state.Document](t)(rt.Update(ctx, a, visURI("private"), "by-a", []byte(`{"$set":{"t":"a's, edited"}}`)))
	// The owner sees what was written; the agent, in its memory scope, does not.
	if got := strings.Join(reads(t, rt, agent, "private"), ","); got != "d" {
		t.Errorf("the agent reads %q, want its own only", got)
	}
	owner := state.Caller{Owner: owner1, Verbs: state.AllVerbs}
	if got := strings.Join(reads(t, rt, owner, "private"), ","); got != "by-a,d" {
		t.Errorf("the owner reads %q", got)
	}
	wantCode(t, rt.Delete(ctx, b, visURI("private"), "by-a", "tombstone"), state.CodeNotFound)
	if err := rt.Delete(ctx, a, visURI("private"), "by-a", "tombstone"); err != nil {
		t.Fatal(err)
	}
}

func TestRequester_OpenedRead(t *testing.T) {
	ctx := context.Background()
	rt, agent := requesterRuntime(t)
	w := requesterOf(agent, "ra")
	w.Open = []state.Grant{{Schema: visURI("private"), Write: true}}
	must[*state.Document](t)(rt.Create(ctx, w, visURI("private"), []byte(`{"id":"by-a","t":"a's"}`)))
	r := requesterOf(agent, "rb")
	r.Open = []state.Grant{{Schema: visURI("private"), Read: true}}
	if got := strings.Join(reads(t, rt, r, "private", "d", "by-a"), ","); got != "d" {
		t.Errorf("an opened read: %q, want the agent's documents, not another requester's", got)
	}
	if got := strings.Join(reads(t, rt, r, "shared", "d"), ","); got != "" {
		t.Errorf("a read opened on private opens shared: %q", got)
	}
	_, err := rt.Update(ctx, r, visURI("private"), "d", []byte(`{"$set":{"t":"y"}}`))
	wantCode(t, err, state.CodePermissionDenied)
	r.Open = []state.Grant{{Schema: visURI("private"), Read: true, Write: true}}
	_, err = rt.Update(ctx, r, visURI("private"), "d", []byte(`{"$set":{"t":"y"}}`))
	wantCode(t, err, state.CodePermissionDenied) // readable, not its own
}
