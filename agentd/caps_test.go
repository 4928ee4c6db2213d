package agentd_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentnode/agentnode/agentd"
	"github.com/agentnode/agentnode/agentd/state"
)

func TestDaemon_InstallCap_SignedFile(t *testing.T) {
	cn := openCapsNode(t, agentd.Config{})
	raw := sign(t, notePackage(t, "1.0.0", "http://example.org/"), cn.author.SK)

	ch := cn.installFile(raw)
	if !ch.Changed || ch.Cap.ID != noteID || ch.Cap.Author != cn.author.PK || ch.Cap.EventID != "" {
		t.Fatalf("install: %+v", ch)
	}
	if got, want := ch.Cap.Permissions, []string{"state.create", "state.update", "state.query"}; !slices.Equal(got, want) {
		t.Errorf("permissions = %v, want %v", got, want)
	}
	if ch.Cap.MemoryScope != "sc:note" || ch.Cap.SchemaURI != noteURI {
		t.Errorf("scope %q schema %q", ch.Cap.MemoryScope, ch.Cap.SchemaURI)
	}
	cached, err := os.ReadFile(filepath.Join(cn.dir, "agents", cn.agent.Agent.PubKey, "caps", "note@1.0.0.acp.yaml"))
	if err != nil || !bytes.Equal(cached, raw) {
		t.Fatalf("cached file differs from the signed one (%v)", err)
	}
	if _, ok := cn.rt.Schemas().Lookup(noteURI); !ok {
		t.Fatal("the package's schema was not registered with the state runtime")
	}
	again := cn.installFile(raw)
	if again.Changed {
		t.Error("installing the same package twice changed something")
	}
	list, err := cn.d.Caps(context.Background(), "Notes Agent")
	if err != nil || len(list) != 1 || list[0].ID != noteID {
		t.Fatalf("caps: %+v, %v", list, err)
	}

	// A new daemon over the same data directory finds the installation.
	d, err := cn.reopen(nil)
	if err != nil {
		t.Fatal(err)
	}
	if list, err := d.Caps(context.Background(), cn.agent.Npub); err != nil || len(list) != 1 {
		t.Fatalf("caps after reopen: %+v, %v", list, err)
	}
}

func TestDaemon_InstallCap_Refused(t *testing.T) {
	cn := openCapsNode(t, agentd.Config{})
	unsigned := notePackage(t, "1.0.0", "http://example.org/")
	signed := sign(t, unsigned, cn.author.SK)
	tampered := bytes.Replace(signed, []byte("You are Note Assistant."), []byte("You are Note  Assistant."), 1)
	invalid := sign(t, bytes.Replace(unsigned, []byte(`"state.create", `), nil, 1), cn.author.SK) // state.create used, not declared
	tests := []struct {
		name string
		raw  []byte
		want string
	}{
		{"unsigned", unsigned, "not signed"},
		{"tampered after signing", tampered, "does not verify"},
		{"invalid package", invalid, "state.create"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := cn.d.InstallCap(context.Background(), cn.agent.Npub, agentd.CapInstallRequest{YAML: string(tt.raw)})
			if !errors.Is(err, agentd.ErrCapRefused) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want ErrCapRefused mentioning %q", err, tt.want)
			}
		})
	}
	if list, _ := cn.d.Caps(context.Background(), cn.agent.Npub); len(list) != 0 {
		t.Fatalf("refused packages were recorded: %+v", list)
	}
}

func TestDaemon_InstallCap_FromRelay(t *testing.T) {
	cn := openCapsNode(t, agentd.Config{})
	ctx := context.Background()
	v1 := cn.publishCap(cn.author.SK, notePackage(t, "1.0.0", "http://example.org/"))
	cn.publishCap(cn.author.SK, notePackage(t, "1.1.0", "http://example.org/", "state.delete"))

	if _, err := cn.d.InstallCap(ctx, cn.agent.Npub, agentd.CapInstallRequest{Ref: "did:nuwa:cap:nothing"}); !errors.Is(err, agentd.ErrCapNotFound) {
		t.Fatalf("unknown capability: %v", err)
	}
	ch, err := cn.d.InstallCap(ctx, cn.agent.Npub, agentd.CapInstallRequest{Ref: "note@1.0.0"})
	if err != nil || ch.Cap.EventID != v1.ID || ch.Cap.Version != "1.0.0" || ch.Cap.Naddr == "" {
		t.Fatalf("install note@1.0.0: %+v, %v", ch, err)
	}

	// The latest version adds state.delete: refused until accepted.
	if _, err := cn.d.UpgradeCap(ctx, cn.agent.Npub, "note", agentd.CapUpgradeRequest{}); !errors.Is(err, agentd.ErrPermissionsAdded) || !strings.Contains(err.Error(), "state.delete") {
		t.Fatalf("upgrade without accepting: %v", err)
	}
	if list, _ := cn.d.Caps(ctx, cn.agent.Npub); list[0].Version != "1.0.0" {
		t.Fatalf("a refused upgrade changed the installation: %+v", list)
	}
	up, err := cn.d.UpgradeCap(ctx, cn.agent.Npub, "note", agentd.CapUpgradeRequest{AcceptPermissions: true})
	if err != nil || !up.Changed || up.Cap.Version != "1.1.0" || up.Previous == nil || up.Previous.Version != "1.0.0" {
		t.Fatalf("upgrade: %+v, %v", up, err)
	}
	if !slices.Equal(up.PermissionsAdded, []string{"state.delete"}) || up.Cap.InstalledAt != ch.Cap.InstalledAt || up.Cap.UpgradedAt.IsZero() {
		t.Errorf("upgrade record: %+v", up)
	}
	capsDir := filepath.Join(cn.dir, "agents", cn.agent.Agent.PubKey, "caps")
	if _, err := os.Stat(filepath.Join(capsDir, "note@1.0.0.acp.yaml")); !os.IsNotExist(err) {
		t.Errorf("the old version's file stays: %v", err)
	}
	if _, err := os.Stat(filepath.Join(capsDir, "note@1.1.0.acp.yaml")); err != nil {
		t.Errorf("the new version's file: %v", err)
	}
	if same, err := cn.d.UpgradeCap(ctx, cn.agent.Npub, "note", agentd.CapUpgradeRequest{}); err != nil || same.Changed {
		t.Fatalf("upgrade when up to date: %+v, %v", same, err)
	}
	// Back to 1.0.0 by version: fewer permissions need no acceptance.
	down, err := cn.d.UpgradeCap(ctx, cn.agent.Npub, "note", agentd.CapUpgradeRequest{To: "1.0.0"})
	if err != nil || down.Cap.Version != "1.0.0" || !slices.Equal(down.PermissionsRemoved, []string{"state.delete"}) {
		t.Fatalf("upgrade --to 1.0.0: %+v, %v", down, err)
	}
}

func TestDaemon_InstallCap_OtherVersionInstalled(t *testing.T) {
	cn := openCapsNode(t, agentd.Config{})
	cn.installFile(sign(t, notePackage(t, "1.0.0", "http://example.org/"), cn.author.SK))
	_, err := cn.d.InstallCap(context.Background(), cn.agent.Npub,
		agentd.CapInstallRequest{YAML: string(sign(t, notePackage(t, "2.0.0", "http://example.org/"), cn.author.SK))})
	if !errors.Is(err, agentd.ErrCapInstalled) || !strings.Contains(err.Error(), "upgrade") {
		t.Fatalf("err = %v, want ErrCapInstalled pointing at upgrade", err)
	}
}

func TestDaemon_RemoveCap_KeepsState(t *testing.T) {
	cn := openCapsNode(t, agentd.Config{})
	ctx := context.Background()
	cn.installFile(sign(t, notePackage(t, "1.0.0", "http://example.org/"), cn.author.SK))
	tools, _, err := cn.d.Tools(ctx, cn.agent.Npub, "note")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tools.CallTool(ctx, "state.create", []byte(`{"schema_uri":"`+noteURI+`","object":`+noteObject("kept")+`}`)); err != nil {
		t.Fatal(err)
	}
	ch, err := cn.d.RemoveCap(ctx, cn.agent.Npub, noteID)
	if err != nil || !ch.Changed || !strings.Contains(ch.Note, "state stays") {
		t.Fatalf("remove: %+v, %v", ch, err)
	}
	if list, _ := cn.d.Caps(ctx, cn.agent.Npub); len(list) != 0 {
		t.Fatalf("caps after remove: %+v", list)
	}
	if _, err := os.Stat(filepath.Join(cn.dir, "agents", cn.agent.Agent.PubKey, "caps", "note@1.0.0.acp.yaml")); !os.IsNotExist(err) {
		t.Errorf("cached file stays after remove: %v", err)
	}
	if _, _, err := cn.d.Tools(ctx, cn.agent.Npub, "note"); !errors.Is(err, agentd.ErrCapNotInstalled) {
		t.Errorf("tools of a removed capability: %v", err)
	}
	owner := state.Caller{Owner: cn.owner.PK, Verbs: state.AllVerbs}
	res, err := cn.rt.Query(ctx, owner, []byte(`{"from":"`+noteURI+`"}`))
	if err != nil || len(res.Rows) != 1 {
		t.Fatalf("the note is gone with the capability: %+v, %v", res, err)
	}
	if _, err := cn.d.RemoveCap(ctx, cn.agent.Npub, "note"); !errors.Is(err, agentd.ErrCapNotInstalled) {
		t.Fatalf("second remove: %v", err)
	}
}

func TestDaemon_UpgradeCap_FromFile(t *testing.T) {
	cn := openCapsNode(t, agentd.Config{})
	ctx := context.Background()
	cn.installFile(sign(t, notePackage(t, "1.0.0", "http://example.org/"), cn.author.SK))
	v2 := sign(t, notePackage(t, "2.0.0", "http://example.org/"), cn.author.SK)
	up, err := cn.d.UpgradeCap(ctx, cn.agent.Npub, "note", agentd.CapUpgradeRequest{YAML: string(v2)})
	if err != nil || up.Cap.Version != "2.0.0" || len(up.PermissionsAdded) != 0 {
		t.Fatalf("upgrade from a file: %+v, %v", up, err)
	}
	other := sign(t, bytes.Replace(notePackage(t, "3.0.0", "http://example.org/"), []byte("did:nuwa:cap:note@"), []byte("did:nuwa:cap:memo@"), 1), cn.author.SK)
	if _, err := cn.d.UpgradeCap(ctx, cn.agent.Npub, "note", agentd.CapUpgradeRequest{YAML: string(other)}); err == nil || !strings.Contains(err.Error(), "not a version of note") {
		t.Fatalf("upgrade to another capability: %v", err)
	}
	unsigned := notePackage(t, "4.0.0", "http://example.org/")
	if _, err := cn.d.UpgradeCap(ctx, cn.agent.Npub, "note", agentd.CapUpgradeRequest{YAML: string(unsigned)}); !errors.Is(err, agentd.ErrCapRefused) {
		t.Fatalf("upgrade to an unsigned file: %v", err)
	}
	if list, _ := cn.d.Caps(ctx, cn.agent.Npub); len(list) != 1 || list[0].Version != "2.0.0" {
		t.Fatalf("caps = %+v", list)
	}
}

// Removing an agent removes its capabilities folder (caps.json and the
// cached packages) with it.
func TestDaemon_Remove_DropsCapabilities(t *testing.T) {
	cn := openCapsNode(t, agentd.Config{})
	cn.installFile(sign(t, notePackage(t, "1.0.0", "http://example.org/"), cn.author.SK))
	dir := filepath.Join(cn.dir, "agents", cn.agent.Agent.PubKey)
	if _, err := os.Stat(filepath.Join(dir, "caps.json")); err != nil {
		t.Fatalf("caps.json after install: %v", err)
	}
	if _, err := cn.d.Remove(context.Background(), cn.agent.Agent.PubKey, false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the agent's capabilities folder after remove: %v, want it gone", err)
	}
}
