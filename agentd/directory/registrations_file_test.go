package directory_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentnode/agentnode/agentd/directory"
)

// TestFileRegistrations_reopen: what one FileRegistrations recorded, a new
// one over the same file loads; a forgotten claim stays forgotten; a
// corrupt file is an error, not an empty directory.
func TestFileRegistrations_reopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "directory", "registrations.json")
	r, err := directory.OpenFileRegistrations(path)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Unix(1_800_000_000, 0).UTC()
	for _, id := range []string{"agent-id-1", "agent-id-2"} {
		c := directory.StoredClaim{Key: "claim:" + id, Claim: directory.Claim{ID: id, Auth: []string{"token verified"}}, Status: "active", At: at}
		if err := r.PutClaim(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.DeleteClaim(ctx, "claim:agent-id-2"); err != nil {
		t.Fatal(err)
	}
	if err := r.SetRegistered(ctx, "ab", true); err != nil {
		t.Fatal(err)
	}
	again, err := directory.OpenFileRegistrations(path)
	if err != nil {
		t.Fatal(err)
	}
	reg, claims, err := again.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(reg) != 1 || reg[0] != "ab" || len(claims) != 1 || claims[0].Claim.ID != "agent-id-1" ||
		!claims[0].At.Equal(at) || claims[0].Claim.Auth[0] != "token verified" {
		t.Fatalf("reopened: registered %v, claims %+v", reg, claims)
	}
	if err := os.WriteFile(path, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := directory.OpenFileRegistrations(path); err == nil {
		t.Fatal("a corrupt registrations file opened without an error")
	}
}
