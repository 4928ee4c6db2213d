package agentd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/agentnode/agentnode/agentd/internal/atomicfile"
	"github.com/agentnode/agentnode/events"
)

// Upgrades replace an agent's files explicitly, like its definition: when
// the new version's file references differ from the installed ones, every
// file of the new version is fetched and verified into a staging
// directory first (a file the agent already has, by sha256, is copied
// from its home, verified); only then, under d.mu, the home is swapped
// whole (files/ renamed aside, the staged directory renamed in, the
// manifest rewritten) and the registry switched. A fetch that fails
// fails the upgrade with ErrFileUnavailable and changes nothing; a
// failure after the swap puts the old files and manifest back.

// fileChanges are the names of the files an upgrade to target adds and
// removes, and whether the agent's file set changes at all. A file is
// kept when the agent has it by the same kind-1063 event, or by the same
// name and sha256 under another one: a publisher signs a new 1063 for an
// unchanged file with each version (a new created_at, another server),
// and that is no change to the agent's home.
func (d *Daemon) fileChanges(ctx context.Context, agent string, target *events.Definition) (added, removed []string, changed bool) {
	have, _ := d.Files(agent)
	want := make([]fileRef, len(target.Files))
	for i, r := range target.Files {
		want[i] = d.resolveRef(ctx, r.ID)
	}
	added, removed = []string{}, []string{}
	for _, f := range have {
		if !slices.ContainsFunc(want, f.sameAs) {
			removed = append(removed, f.Name)
		}
	}
	for _, r := range want {
		if !slices.ContainsFunc(have, func(f InstalledFile) bool { return f.sameAs(r) }) {
			added = append(added, r.name)
		}
	}
	return added, removed, len(added) > 0 || len(removed) > 0
}

// fileRef is a definition's file reference as its kind-1063 describes it:
// name and sha256 are empty when the 1063 is not at hand (name is then
// the id).
type fileRef struct{ id, name, sha256 string }

// sameAs reports whether f is the file r names: the same 1063, or the
// same name and content.
func (f InstalledFile) sameAs(r fileRef) bool {
	return f.Meta == r.id || r.sha256 != "" && f.SHA256 == r.sha256 && f.Name == r.name
}

// resolveRef describes the 1063 id from the store.
func (d *Daemon) resolveRef(ctx context.Context, id string) fileRef {
	if evt, err := d.byID(ctx, id); err == nil && evt != nil {
		if m, err := events.ParseFileMetadata(evt); err == nil {
			return fileRef{id: id, name: m.FileName(), sha256: m.SHA256}
		}
	}
	return fileRef{id: id, name: id}
}

// upgradeFiles is what an upgrade does to the agent's files: nothing
// (!changed), or replace them with staged (nil: no files any more).
type upgradeFiles struct {
	changed bool
	staged  *stagedFiles
}

// stageUpgrade fetches and verifies target's files when the set changes.
func (d *Daemon) stageUpgrade(ctx context.Context, a Agent, target *events.Definition, plan UpgradePlan) (upgradeFiles, error) {
	if len(plan.FilesAdded) == 0 && len(plan.FilesRemoved) == 0 {
		return upgradeFiles{}, nil
	}
	prior, err := d.Files(a.PubKey)
	if err != nil {
		return upgradeFiles{}, err
	}
	st, err := d.stageRefsFrom(ctx, target.PubKey, target.Files, prior)
	if err != nil {
		return upgradeFiles{}, err
	}
	return upgradeFiles{changed: true, staged: st}, nil
}

// discard drops what was staged.
func (u upgradeFiles) discard() { u.staged.discard() }

// swap puts u's files in the agent's home. It returns undo (the old home
// and manifest back) and commit (the old home removed). The caller holds
// d.mu.
func (d *Daemon) swap(agent string, u upgradeFiles) (undo func() error, commit func(), err error) {
	if !u.changed {
		return func() error { return nil }, func() {}, nil
	}
	home, manifest := d.FilesDir(agent), d.manifestPath(agent)
	aside := home + ".old-" + randomName()
	oldManifest, err := os.ReadFile(manifest)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		u.discard()
		return nil, nil, fmt.Errorf("agentd: files manifest: %w", err)
	}
	hadHome := os.Rename(home, aside) == nil
	undo = func() error {
		errs := []error{os.RemoveAll(home), restoreManifest(manifest, oldManifest)}
		if hadHome {
			errs = append(errs, os.Rename(aside, home))
		}
		return errors.Join(append(errs, atomicfile.SyncDir(filepath.Dir(home)))...)
	}
	commit = func() { os.RemoveAll(aside) }
	if err := d.placeUpgrade(agent, u.staged); err != nil {
		u.discard()
		return nil, nil, errors.Join(err, undo())
	}
	return undo, commit, nil
}

// placeUpgrade renames the staged files to the home and writes the
// manifest; no staged files: no manifest.
func (d *Daemon) placeUpgrade(agent string, st *stagedFiles) error {
	if st == nil {
		if err := os.Remove(d.manifestPath(agent)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("agentd: files manifest: %w", err)
		}
		return atomicfile.SyncDir(filepath.Dir(d.FilesDir(agent)))
	}
	return d.adopt(agent, st)
}

// restoreManifest writes b back at path (nil: no manifest).
func restoreManifest(path string, b []byte) error {
	if b == nil {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	}
	return atomicfile.Write(path, b, 0o600)
}
