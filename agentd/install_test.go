package agentd_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip19"

	"github.com/agentnode/agentnode/agentd"
	"github.com/agentnode/agentnode/agentd/keystore"
	"github.com/agentnode/agentnode/events"
	"github.com/agentnode/agentnode/internal/testkit"
)

func TestDaemon_Install(t *testing.T) {
	n := openNode(t, agentd.Config{})
	author, owner := testkit.NewKey(t), testkit.NewKey(t)
	def := n.definition(author, reviewer())
	ownerNpub, _ := nip19.EncodePublicKey(owner.PK)

	res := n.install(agentd.InstallRequest{Definition: def.ID, Owner: ownerNpub})
	a := res.Agent
	if !res.Created || a.Name != "Code Reviewer" || a.Owner != owner.PK || a.DefinitionID != def.ID || a.DefinitionKey != def.Key() {
		t.Fatalf("installed = %+v", res)
	}
	if want := "agentnode claim add " + res.Npub; res.ClaimCommand != want {
		t.Errorf("claim command = %q, want %q", res.ClaimCommand, want)
	}

	t.Run("profile", func(t *testing.T) {
		evts, err := n.r.QuerySync(context.Background(), nostr.Filter{Kinds: []int{0}, Authors: []string{a.PubKey}})
		if err != nil || len(evts) != 1 {
			t.Fatalf("kind 0 of the agent: %d events, %v", len(evts), err)
		}
		p, err := events.ParseProfile(evts[0])
		if err != nil {
			t.Fatal(err)
		}
		if !p.Bot || p.DefinitionID != def.ID || p.Owner != owner.PK || p.Name != "Code Reviewer" {
			t.Errorf("profile = %+v", p)
		}
	})

	t.Run("key file", func(t *testing.T) {
		fi, err := os.Stat(filepath.Join(n.dir, "agents", a.PubKey+".key"))
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != 0o600 {
			t.Errorf("key file mode = %04o, want 0600", got)
		}
		di, _ := os.Stat(filepath.Join(n.dir, "agents"))
		if got := di.Mode().Perm(); got != 0o700 {
			t.Errorf("agents dir mode = %04o, want 0700", got)
		}
		raw, _ := os.ReadFile(filepath.Join(n.dir, "agents", a.PubKey+".key"))
		if !events.IsHex64(strings.TrimSpace(string(raw))) {
			t.Errorf("key file holds %d bytes, want 64 hex characters", len(raw))
		}
	})

	t.Run("idempotent", func(t *testing.T) {
		again := n.install(agentd.InstallRequest{Definition: def.ID, Owner: owner.PK, Name: "Code Reviewer"})
		if again.Created || again.Agent.PubKey != a.PubKey {
			t.Errorf("second install = created %v, %s; want the existing %s", again.Created, again.Agent.PubKey, a.PubKey)
		}
		if got := len(n.d.List()); got != 1 {
			t.Errorf("%d agents, want 1", got)
		}
	})

	t.Run("two agents from one definition", func(t *testing.T) {
		b := n.install(agentd.InstallRequest{Definition: def.ID, Owner: owner.PK, Name: "Second Reviewer"})
		if !b.Created || b.Agent.PubKey == a.PubKey || b.Agent.DefinitionID != def.ID {
			t.Fatalf("second agent = %+v", b)
		}
		keys, _ := filepath.Glob(filepath.Join(n.dir, "agents", "*.key"))
		if len(keys) != 2 {
			t.Errorf("%d key files, want 2", len(keys))
		}
		if _, err := n.d.Lookup("Second Reviewer"); err != nil {
			t.Errorf("lookup by name: %v", err)
		}
	})

	t.Run("registry survives a restart", func(t *testing.T) {
		before := n.d.List()
		d, err := n.reopen(nil)
		if err != nil {
			t.Fatal(err)
		}
		after := d.List()
		if len(after) != len(before) || after[0].PubKey != before[0].PubKey || !after[0].InstalledAt.Equal(before[0].InstalledAt) {
			t.Errorf("after restart %+v, before %+v", after, before)
		}
		fi, err := os.Stat(filepath.Join(n.dir, "agents", "agents.json"))
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("agents.json: %v, mode %v", err, fi.Mode())
		}
	})
}

func TestDaemon_Install_refs(t *testing.T) {
	n := openNode(t, agentd.Config{})
	author, owner := testkit.NewKey(t), testkit.NewKey(t)
	v1 := n.definition(author, reviewer())
	d2 := reviewer()
	d2.Version, d2.Role = "2", "You review Go code thoroughly."
	v2 := n.definition(author, d2)
	authorNpub, _ := nip19.EncodePublicKey(author.PK)
	nevent, _ := nip19.EncodeEvent(v1.ID, nil, author.PK)
	naddr, _ := nip19.EncodeEntity(author.PK, events.KindDefinition, "reviewer", nil)

	for _, tc := range []struct {
		ref, want string
	}{
		{v1.ID, v1.ID},
		{nevent, v1.ID},
		{authorNpub + ":reviewer", v2.ID},
		{author.PK + ":reviewer", v2.ID},
		{naddr, v2.ID},
	} {
		res, err := n.d.Install(context.Background(), agentd.InstallRequest{Definition: tc.ref, Owner: owner.PK, Name: tc.ref})
		if err != nil {
			t.Errorf("install %s: %v", tc.ref, err)
			continue
		}
		if res.Agent.DefinitionID != tc.want {
			t.Errorf("install %s: definition %s, want %s", tc.ref, res.Agent.DefinitionID, tc.want)
		}
	}

	for _, tc := range []struct {
		req  agentd.InstallRequest
		want error
	}{
		{agentd.InstallRequest{Definition: "nonsense", Owner: owner.PK}, agentd.ErrBadRequest},
		{agentd.InstallRequest{Definition: v1.ID}, agentd.ErrBadRequest},
		{agentd.InstallRequest{Definition: v1.ID, Owner: "npub1nope"}, agentd.ErrBadRequest},
		{agentd.InstallRequest{Definition: strings.Repeat("ab", 32), Owner: owner.PK}, agentd.ErrDefinitionNotFound},
		{agentd.InstallRequest{Definition: authorNpub + ":nothing", Owner: owner.PK}, agentd.ErrDefinitionNotFound},
	} {
		if _, err := n.d.Install(context.Background(), tc.req); !errors.Is(err, tc.want) {
			t.Errorf("install %+v: err %v, want %v", tc.req, err, tc.want)
		}
	}
}

func TestDaemon_Open_encryptedKeys(t *testing.T) {
	n := openNode(t, agentd.Config{Passphrase: "correct horse", KeyLogN: 12})
	def := n.definition(testkit.NewKey(t), reviewer())
	a := n.install(agentd.InstallRequest{Definition: def.ID, Owner: testkit.NewKey(t).PK}).Agent
	raw, err := os.ReadFile(filepath.Join(n.dir, "agents", a.PubKey+".key"))
	if err != nil || !strings.HasPrefix(string(raw), "ncryptsec1") {
		t.Fatalf("key file = %.20q, %v; want an ncryptsec", raw, err)
	}

	if _, err := n.reopen(func(c *agentd.Config) { c.Passphrase = "wrong" }); !errors.Is(err, keystore.ErrWrongPassphrase) {
		t.Errorf("open with a wrong passphrase: %v, want ErrWrongPassphrase", err)
	}
	if _, err := n.reopen(func(c *agentd.Config) { c.Passphrase = "" }); !errors.Is(err, keystore.ErrPassphraseRequired) {
		t.Errorf("open without a passphrase: %v, want ErrPassphraseRequired", err)
	}
	d, err := n.reopen(nil)
	if err != nil {
		t.Fatalf("open with the right passphrase: %v", err)
	}
	evt, err := d.Learn(context.Background(), a.PubKey, "Signed after a restart", "", "The decrypted key signs.")
	if err != nil || evt.PubKey != a.PubKey {
		t.Fatalf("learn after reopening: %v", err)
	}
}

func TestDaemon_Open_insecureKeyFile(t *testing.T) {
	n := openNode(t, agentd.Config{})
	def := n.definition(testkit.NewKey(t), reviewer())
	a := n.install(agentd.InstallRequest{Definition: def.ID, Owner: testkit.NewKey(t).PK}).Agent
	n.closeDaemon()
	if err := os.Chmod(filepath.Join(n.dir, "agents", a.PubKey+".key"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := n.reopen(nil); !errors.Is(err, keystore.ErrInsecureFile) {
		t.Errorf("open with a 0644 key file: %v, want ErrInsecureFile", err)
	}
}

func TestDaemon_Remove(t *testing.T) {
	n := openNode(t, agentd.Config{})
	def := n.definition(testkit.NewKey(t), reviewer())
	owner := testkit.NewKey(t)
	keep := n.install(agentd.InstallRequest{Definition: def.ID, Owner: owner.PK, Name: "keep"}).Agent
	gone := n.install(agentd.InstallRequest{Definition: def.ID, Owner: owner.PK, Name: "retract"}).Agent
	ctx := context.Background()
	lesson, err := n.d.Learn(ctx, gone.PubKey, "Short lived", "", "Soon retracted.")
	if err != nil {
		t.Fatal(err)
	}

	res, err := n.d.Remove(ctx, "keep", false)
	if err != nil {
		t.Fatal(err)
	}
	if res.Agent.PubKey != keep.PubKey || len(res.Retractions) != 0 || res.ClaimCommand != "agentnode claim remove "+res.Npub {
		t.Errorf("removed = %+v", res)
	}
	if _, err := os.Stat(filepath.Join(n.dir, "agents", keep.PubKey+".key")); !os.IsNotExist(err) {
		t.Errorf("key file still there: %v", err)
	}
	if _, err := n.d.Lookup(keep.PubKey); !errors.Is(err, agentd.ErrUnknownAgent) {
		t.Errorf("lookup after remove: %v", err)
	}
	if evts, _ := n.r.QuerySync(ctx, nostr.Filter{Authors: []string{keep.PubKey}}); len(evts) != 1 {
		t.Errorf("without retract the profile stays: %d events", len(evts))
	}

	res, err = n.d.Remove(ctx, gone.PubKey, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Retractions) != 1 || !slices.ContainsFunc(res.Retractions[0].Tags, func(tg nostr.Tag) bool { return tg[0] == "e" && tg[1] == lesson.ID }) {
		t.Errorf("retractions = %v", res.Retractions)
	}
	if evts, _ := n.r.QuerySync(ctx, nostr.Filter{Kinds: []int{0, 4129}, Authors: []string{gone.PubKey}}); len(evts) != 0 {
		t.Errorf("after retract %d profile/lesson events remain", len(evts))
	}
	if got := n.d.List(); len(got) != 0 {
		t.Errorf("registry still lists %+v", got)
	}
	if _, err := n.reopen(nil); err != nil {
		t.Errorf("reopen after removals: %v", err)
	}
}
