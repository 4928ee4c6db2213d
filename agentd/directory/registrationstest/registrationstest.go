// Package registrationstest is the conformance suite of
// directory.Registrations: the in-memory one and agentd/agentpg run it.
//
//	registrationstest.Run(t, func(t *testing.T) registrationstest.Open {
//		m := directory.NewMemoryRegistrations()
//		return func() directory.Registrations { return m }
//	})
package registrationstest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/agentnode/agentnode/agentd/directory"
	"github.com/agentnode/agentnode/internal/testkit"
)

// Open returns a new handle on one backing.
type Open func() directory.Registrations

// Fresh makes an empty backing and returns how to open handles on it.
type Fresh = testkit.Fresh[Open]

// Run runs the suite.
func Run(t *testing.T, fresh Fresh) {
	testkit.RunSuite(t, fresh,
		testkit.Case[Open]{Name: "Registered", Test: registered},
		testkit.Case[Open]{Name: "Claims", Test: claims},
	)
}

func registered(t *testing.T, open Open) {
	ctx := context.Background()
	a := open()
	for _, x := range []string{"bb", "aa", "cc"} {
		if err := a.SetRegistered(ctx, x, true); err != nil {
			t.Fatal(err)
		}
	}
	a.SetRegistered(ctx, "aa", true) // again: no duplicate
	if err := a.SetRegistered(ctx, "cc", false); err != nil {
		t.Fatal(err)
	}
	reg, _, err := open().Load(ctx)
	if err != nil || !slices.Equal(reg, []string{"aa", "bb"}) {
		t.Errorf("Load registered = %v, %v; want [aa bb]", reg, err)
	}
}

func claims(t *testing.T, open Open) {
	ctx := context.Background()
	a := open()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	c := directory.Claim{ID: "x", Name: "X", Tools: []string{"t1"}, Models: []string{"m"}, Specializations: []string{"s"}, CostPerToken: 0.5, Auth: []string{"token"}}
	if err := a.PutClaim(ctx, directory.StoredClaim{Key: "claim:x", Claim: c, Status: "active", At: at}); err != nil {
		t.Fatal(err)
	}
	a.PutClaim(ctx, directory.StoredClaim{Key: "claim:a", Claim: directory.Claim{ID: "a"}, Status: "busy", At: at})
	c.Name = "X2"
	if err := a.PutClaim(ctx, directory.StoredClaim{Key: "claim:x", Claim: c, Status: "offline", At: at.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	_, got, err := open().Load(ctx)
	want := []directory.StoredClaim{
		{Key: "claim:a", Claim: directory.Claim{ID: "a"}, Status: "busy", At: at},
		{Key: "claim:x", Claim: c, Status: "offline", At: at.Add(time.Minute)},
	}
	if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Load claims = %+v, %v\nwant %+v", got, err, want)
	}
	if err := a.DeleteClaim(ctx, "claim:x"); err != nil {
		t.Fatal(err)
	}
	if err := a.DeleteClaim(ctx, "claim:none"); err != nil {
		t.Errorf("DeleteClaim of none: %v", err)
	}
	if _, got, _ := open().Load(ctx); len(got) != 1 || got[0].Key != "claim:a" {
		t.Errorf("after delete: %+v", got)
	}
}
