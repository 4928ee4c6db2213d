package agentd_test

import (
	"strings"
	"testing"

	"github.com/agentnode/agentnode/agentd"
)

func TestSenderPolicy_Admits(t *testing.T) {
	const owner, stranger, friend = "owner", "stranger", "friend"
	sibling := func(o string) func() string { return func() string { return o } }
	for _, tc := range []struct {
		name     string
		p        agentd.SenderPolicy
		owner    string
		from     string
		siblings func() string
		want     bool
	}{
		{"the default admits anyone", agentd.SenderPolicy{}, owner, stranger, nil, true},
		{"anyone, even to an unowned agent", agentd.SenderPolicy{From: agentd.SendersAnyone}, "", stranger, nil, true},
		{"owner: the owner", agentd.SenderPolicy{From: agentd.SendersOwner}, owner, owner, nil, true},
		{"owner: a stranger", agentd.SenderPolicy{From: agentd.SendersOwner}, owner, stranger, nil, false},
		{"owner: an unowned agent admits no one", agentd.SenderPolicy{From: agentd.SendersOwner}, "", "", nil, false},
		{"owner: the allowlist does not count", agentd.SenderPolicy{From: agentd.SendersOwner, Allow: []string{friend}}, owner, friend, nil, false},
		{"allowlist: a listed key", agentd.SenderPolicy{From: agentd.SendersAllowlist, Allow: []string{friend}}, owner, friend, nil, true},
		{"allowlist: the owner", agentd.SenderPolicy{From: agentd.SendersAllowlist}, owner, owner, nil, true},
		{"allowlist: a stranger", agentd.SenderPolicy{From: agentd.SendersAllowlist, Allow: []string{friend}}, owner, stranger, nil, false},
		{"a sibling of the same owner", agentd.SenderPolicy{From: agentd.SendersOwner}, owner, stranger, sibling(owner), true},
		{"a sibling of another owner", agentd.SenderPolicy{From: agentd.SendersOwner}, owner, stranger, sibling("other"), false},
		{"an agent with no verified owner", agentd.SenderPolicy{From: agentd.SendersOwner}, owner, stranger, sibling(""), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.p.Admits(tc.owner, tc.from, tc.siblings); got != tc.want {
				t.Errorf("Admits = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestSenderPolicy_AdmitsAsksSiblingsOnlyWhenNeeded(t *testing.T) {
	asked := false
	p := agentd.SenderPolicy{From: agentd.SendersOwner}
	p.Admits("owner", "owner", func() string { asked = true; return "" })
	if asked {
		t.Error("the owner's own call read the relay for its owner link")
	}
}

func TestSenderPolicy_Check(t *testing.T) {
	const hexPK = "79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798"
	p := agentd.SenderPolicy{}
	if err := p.Check("dm"); err != nil || p.From != agentd.SendersAnyone {
		t.Errorf("empty: %v, From %q", err, p.From)
	}
	p = agentd.SenderPolicy{From: "friends"}
	if err := p.Check("dm"); err == nil || !strings.Contains(err.Error(), `"dm.from" "friends"`) {
		t.Errorf("bad from: %v", err)
	}
	p = agentd.SenderPolicy{From: agentd.SendersAllowlist, Allow: []string{"nope"}}
	if err := p.Check("a2a"); err == nil || !strings.Contains(err.Error(), `"a2a.allow" "nope"`) {
		t.Errorf("bad allow: %v", err)
	}
	p = agentd.SenderPolicy{From: agentd.SendersAllowlist, Allow: []string{strings.ToUpper(hexPK)}}
	if err := p.Check("a2a"); err != nil {
		t.Errorf("hex allow: %v", err)
	}
}

func TestSenderPolicy_Knows(t *testing.T) {
	const owner, stranger, friend = "owner", "stranger", "friend"
	sibling := func(o string) func() string { return func() string { return o } }
	anyone := agentd.SenderPolicy{Allow: []string{friend}}
	for _, tc := range []struct {
		name     string
		owner    string
		from     string
		siblings func() string
		want     bool
	}{
		{"the owner", owner, owner, nil, true},
		{"a listed key, even under anyone", owner, friend, nil, true},
		{"a stranger", owner, stranger, nil, false},
		{"a sibling of the same owner", owner, stranger, sibling(owner), true},
		{"a sibling of another owner", owner, stranger, sibling("other"), false},
		{"nobody is the owner of an unowned agent", "", "", sibling(""), false},
		{"an unowned agent has no siblings", "", stranger, sibling(""), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := anyone.Knows(tc.owner, tc.from, tc.siblings); got != tc.want {
				t.Errorf("Knows = %v, want %v", got, tc.want)
			}
		})
	}
}
