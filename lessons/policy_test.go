package lessons_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/agentnode/agentnode/internal/testkit"
	"github.com/agentnode/agentnode/lessons"
)

func TestDefaultPolicy(t *testing.T) {
	p := lessons.DefaultPolicy()
	want := []lessons.Rule{"self", "owner", "definition-author", "sibling", "allowlist"}
	if got := p.EnabledRules(); !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if p.Enabled(lessons.RuleFollows) {
		t.Error("follows is on by default")
	}
}

func TestNewPolicy(t *testing.T) {
	k := testkit.NewKey(t)
	cases := []struct {
		name    string
		cfg     lessons.Config
		on, off []lessons.Rule
		allow   string
		err     error
	}{
		{name: "enable follows", cfg: lessons.Config{Enable: []string{"follows"}}, on: []lessons.Rule{"follows", "sibling"}},
		{name: "follow_hop", cfg: lessons.Config{FollowHop: true}, on: []lessons.Rule{"follows"}},
		{name: "disable several", cfg: lessons.Config{Disable: []string{"sibling", " owner "}}, off: []lessons.Rule{"sibling", "owner"}, on: []lessons.Rule{"self"}},
		{name: "disable wins", cfg: lessons.Config{Enable: []string{"follows"}, Disable: []string{"follows"}}, off: []lessons.Rule{"follows"}},
		{name: "npub allowlist", cfg: lessons.Config{Allowlist: []string{npubOf(t, k.PK)}}, allow: k.PK},
		{name: "hex allowlist", cfg: lessons.Config{Allowlist: []string{k.PK}}, allow: k.PK},
		{name: "unknown rule", cfg: lessons.Config{Enable: []string{"everyone"}}, err: lessons.ErrUnknownRule},
		{name: "unknown rule to disable", cfg: lessons.Config{Disable: []string{"Owner"}}, err: lessons.ErrUnknownRule},
		{name: "bad allowlist entry", cfg: lessons.Config{Allowlist: []string{"npub1nope"}}, err: lessons.ErrBadAllowlist},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := lessons.NewPolicy(tc.cfg)
			if !errors.Is(err, tc.err) || (err != nil) != (tc.err != nil) {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			if err != nil {
				return
			}
			for _, r := range tc.on {
				if !p.Enabled(r) {
					t.Errorf("%s is off", r)
				}
			}
			for _, r := range tc.off {
				if p.Enabled(r) {
					t.Errorf("%s is on", r)
				}
			}
			if tc.allow != "" && !p.Allowlisted(tc.allow) {
				t.Errorf("%s not allowlisted", tc.allow)
			}
			again, err := lessons.NewPolicy(p.Config())
			if err != nil || again.Fingerprint() != p.Fingerprint() {
				t.Errorf("Config round trip: %v, %q != %q", err, again.Fingerprint(), p.Fingerprint())
			}
		})
	}
}
