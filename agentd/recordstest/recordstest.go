// Package recordstest is the conformance suite of agentd.Records: every
// backend (agentd/agentpg; agents.json in agentd's own tests) runs it.
//
//	recordstest.Run(t, func(t *testing.T) recordstest.Open {
//		url := pgtest.URL(t)
//		return func() agentd.Records { return openDB(t, url).Agents() }
//	})
package recordstest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd"
	"github.com/agentnode/agentnode/internal/testkit"
)

// Open returns a new handle (a restart, another instance) on one backing.
type Open func() agentd.Records

// Fresh makes an empty backing and returns how to open handles on it.
type Fresh = testkit.Fresh[Open]

// Run runs the suite.
func Run(t *testing.T, fresh Fresh) {
	testkit.RunSuite(t, fresh,
		testkit.Case[Open]{Name: "PutGetList", Test: putGetList},
		testkit.Case[Open]{Name: "ReplaceKeepsOrder", Test: replaceKeepsOrder},
		testkit.Case[Open]{Name: "Remove", Test: remove},
		testkit.Case[Open]{Name: "Refuses", Test: refuses},
		testkit.Case[Open]{Name: "Concurrent", Test: concurrent},
	)
}

func hex64() string {
	pk, _ := nostr.GetPublicKey(nostr.GeneratePrivateKey())
	return pk
}

// Agent returns a valid record named name.
func Agent(name string) agentd.Agent {
	def := hex64()
	return agentd.Agent{PubKey: hex64(), Name: name, Owner: hex64(), DefinitionID: def,
		DefinitionKey: hex64() + ":" + name, InstalledFrom: def, Nudges: []string{hex64()},
		InstalledAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), AutoUpgrade: true}
}

func pubkeys(as []agentd.Agent) []string {
	var out []string
	for _, a := range as {
		out = append(out, a.PubKey)
	}
	return out
}

func putGetList(t *testing.T, open Open) {
	ctx := context.Background()
	r := open()
	a, b := Agent("a"), Agent("b")
	b.Nudges = []string{}
	for _, x := range []agentd.Agent{a, b} {
		if err := r.Put(ctx, x); err != nil {
			t.Fatal(err)
		}
	}
	other := open()
	got, err := other.Get(ctx, a.PubKey)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint(a) {
		t.Errorf("Get = %+v\nwant  %+v", got, a)
	}
	list, err := other.List(ctx)
	if err != nil || !slices.Equal(pubkeys(list), []string{a.PubKey, b.PubKey}) {
		t.Fatalf("List = %v, %v", pubkeys(list), err)
	}
	if list[1].Nudges == nil || len(list[1].Nudges) != 0 {
		t.Errorf("no nudges read back as %#v, want []string{}", list[1].Nudges)
	}
}

func replaceKeepsOrder(t *testing.T, open Open) {
	ctx := context.Background()
	r := open()
	a, b := Agent("a"), Agent("b")
	r.Put(ctx, a)
	r.Put(ctx, b)
	a.Name, a.UpgradedAt = "renamed", time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC)
	if err := r.Put(ctx, a); err != nil {
		t.Fatal(err)
	}
	list, _ := open().List(ctx)
	if !slices.Equal(pubkeys(list), []string{a.PubKey, b.PubKey}) || list[0].Name != "renamed" || !list[0].UpgradedAt.Equal(a.UpgradedAt) {
		t.Errorf("after replace: %+v", list)
	}
}

func remove(t *testing.T, open Open) {
	ctx := context.Background()
	r := open()
	a := Agent("a")
	r.Put(ctx, a)
	if err := r.Remove(ctx, a.PubKey); err != nil {
		t.Fatal(err)
	}
	if _, err := open().Get(ctx, a.PubKey); !errors.Is(err, agentd.ErrUnknownAgent) {
		t.Errorf("Get after Remove: %v, want ErrUnknownAgent", err)
	}
	if err := r.Remove(ctx, a.PubKey); !errors.Is(err, agentd.ErrUnknownAgent) {
		t.Errorf("second Remove: %v, want ErrUnknownAgent", err)
	}
}

func refuses(t *testing.T, open Open) {
	bad := Agent("bad")
	bad.Owner = "not-hex"
	if err := open().Put(context.Background(), bad); !errors.Is(err, agentd.ErrBadRequest) {
		t.Errorf("Put(bad owner): %v, want ErrBadRequest", err)
	}
}

func concurrent(t *testing.T, open Open) {
	ctx := context.Background()
	var wg sync.WaitGroup
	want := make([]string, 8)
	for i := range want {
		r := open()
		wg.Go(func() {
			a := Agent(fmt.Sprint("c", i))
			want[i] = a.PubKey
			if err := r.Put(ctx, a); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	list, err := open().List(ctx)
	got := pubkeys(list)
	slices.Sort(got)
	slices.Sort(want)
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("List = %v, %v; want %v", got, err, want)
	}
}
