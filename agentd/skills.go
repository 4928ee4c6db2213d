package agentd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentnode/agentnode/agentd/internal/atomicfile"
	"github.com/agentnode/agentnode/events"
	"github.com/agentnode/agentnode/lessons"
)

// Skills (NIP-AD kind 4202): instructions an agent follows, with files.
// A skill installs on one agent: its files are fetched and verified like
// a definition's (deffiles.go) into <data>/agents/<agent>/skills/<id>/,
// and its instructions enter the agent's effective prompt with their
// provenance. A skill by an author the agent does not trust (not the
// agent, its owner, its definition's author or the trust allowlist) is
// refused with ErrUntrustedSkill unless the request accepts it: shown,
// never installed silently.

// ErrUntrustedSkill: the skill's author is not one the agent trusts and
// the request did not accept it.
var ErrUntrustedSkill = errors.New("the skill's author is not trusted by this agent: accept it explicitly")

// SkillInstallRequest asks for a skill on an agent.
type SkillInstallRequest struct {
	Skill  string `json:"skill"`            // nevent, note or hex id of a kind 4202 on the local relay
	Accept bool   `json:"accept,omitempty"` // install although the author is not trusted
}

// InstalledSkill is a skill on an agent.
type InstalledSkill struct {
	ID          string          `json:"id"`
	Author      string          `json:"author"`
	Title       string          `json:"title"`
	Description string          `json:"description,omitempty"`
	License     string          `json:"license,omitempty"`
	Content     string          `json:"content"`
	Trusted     bool            `json:"trusted"` // false: installed on the owner's explicit acceptance
	Dir         string          `json:"dir,omitempty"`
	Files       []InstalledFile `json:"files,omitempty"`
}

// maxSkills bounds the skills of one agent.
const maxSkills = 32

// InstallSkill installs the skill on the agent (idempotent by skill id).
func (d *Daemon) InstallSkill(ctx context.Context, agent string, req SkillInstallRequest) (InstalledSkill, error) {
	a, err := d.Lookup(agent)
	if err != nil {
		return InstalledSkill{}, err
	}
	sk, err := d.skillEvent(ctx, req.Skill)
	if err != nil {
		return InstalledSkill{}, err
	}
	trusted := d.trustsAuthor(a, sk.PubKey)
	if !trusted && !req.Accept {
		return InstalledSkill{}, fmt.Errorf("%w: %q by %s (license %s, %d files)", ErrUntrustedSkill, sk.Title, npubOf(sk.PubKey), orDash(sk.License), len(sk.Files))
	}
	staged, err := d.stageRefs(ctx, sk.PubKey, sk.Files)
	if err != nil {
		return InstalledSkill{}, err
	}
	is := InstalledSkill{ID: sk.ID, Author: sk.PubKey, Title: sk.Title, Description: sk.Description,
		License: sk.License, Content: sk.Content, Trusted: trusted}
	if err := d.begin(); err != nil {
		staged.discard()
		return InstalledSkill{}, err
	}
	defer d.mu.Unlock()
	return d.putSkill(a, is, staged)
}

// skillEvent reads the kind 4202 ref names from the local relay.
func (d *Daemon) skillEvent(ctx context.Context, ref string) (*events.Skill, error) {
	r, err := events.ParseRef(ref)
	if err != nil || r.ID == "" {
		return nil, fmt.Errorf("%w: skill: want an nevent, note or hex id", ErrBadRequest)
	}
	evt, err := d.byID(ctx, r.ID)
	if err != nil {
		return nil, err
	}
	if evt == nil || evt.Kind != events.KindSkill {
		return nil, fmt.Errorf("%w: no skill (kind 4202) %s on the local relay", ErrBadRequest, r.ID)
	}
	sk, err := events.ParseSkill(evt)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadRequest, err)
	}
	return sk, nil
}

// trustsAuthor: the agent, its owner, its definition's author or the
// trust allowlist.
func (d *Daemon) trustsAuthor(a Agent, author string) bool {
	defAuthor, _, _ := strings.Cut(a.DefinitionKey, ":")
	return author == a.PubKey || author == a.Owner || author == defAuthor || slices.Contains(d.cfg.Trust.Allowlist, author)
}

// putSkill places the staged files and records the skill; the caller
// holds d.mu.
func (d *Daemon) putSkill(a Agent, is InstalledSkill, staged *stagedFiles) (InstalledSkill, error) {
	skills, err := d.Skills(a.PubKey)
	if err != nil {
		staged.discard()
		return InstalledSkill{}, err
	}
	if i := slices.IndexFunc(skills, func(s InstalledSkill) bool { return s.ID == is.ID }); i >= 0 {
		staged.discard()
		return skills[i], nil
	}
	if len(skills) >= maxSkills {
		staged.discard()
		return InstalledSkill{}, fmt.Errorf("%w: the agent has %d skills, the most it may have", ErrBadRequest, maxSkills)
	}
	if staged != nil {
		is.Dir = filepath.Join(d.cfg.DataDir, "agents", a.PubKey, "skills", is.ID)
		if is.Files, err = staged.moveTo(is.Dir); err != nil {
			return InstalledSkill{}, err
		}
	}
	b, _ := json.MarshalIndent(append(skills, is), "", "  ")
	if err := atomicfile.Write(d.skillsPath(a.PubKey), b, 0o600); err != nil {
		return InstalledSkill{}, fmt.Errorf("agentd: skills: %w", err)
	}
	d.live.set(a) // recompose: the prompt has the skill now
	d.log.Info("skill installed", "agent", a.PubKey, "skill", is.ID, "author", is.Author, "trusted", is.Trusted)
	return is, nil
}

// moveTo renames the staging directory to dir, returning the files
// with their new paths.
func (st *stagedFiles) moveTo(dir string) ([]InstalledFile, error) {
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		st.discard()
		return nil, fmt.Errorf("agentd: files: %w", err)
	}
	os.RemoveAll(dir)
	if err := os.Rename(st.dir, dir); err != nil {
		st.discard()
		return nil, fmt.Errorf("agentd: files: %w", err)
	}
	files := slices.Clone(st.files)
	for i := range files {
		files[i].Path = filepath.Join(dir, files[i].Name)
	}
	return files, atomicfile.SyncDir(filepath.Dir(dir))
}

// skillsPath lists the agent's skills.
func (d *Daemon) skillsPath(agent string) string {
	return filepath.Join(d.cfg.DataDir, "agents", agent, "skills.json")
}

// Skills are the skills installed on the agent, in install order.
func (d *Daemon) Skills(agent string) ([]InstalledSkill, error) {
	b, err := os.ReadFile(d.skillsPath(agent))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("agentd: skills: %w", err)
	}
	var skills []InstalledSkill
	if err := json.Unmarshal(b, &skills); err != nil {
		return nil, fmt.Errorf("agentd: skills: %w", err)
	}
	return skills, nil
}

// skillsKey identifies the agent's skills for the composition cache.
func skillsKey(skills []InstalledSkill) string {
	var b strings.Builder
	for _, s := range skills {
		b.WriteString("|skill:" + s.ID)
	}
	return b.String()
}

// withSkills appends each skill's instructions to the prompt, headed by
// its provenance: title, kind-4202 id, author, license, trust and where
// its files are.
func withSkills(eff lessons.Effective, skills []InstalledSkill) lessons.Effective {
	if len(skills) == 0 {
		return eff
	}
	var b strings.Builder
	b.WriteString(strings.TrimRight(eff.Prompt, "\n"))
	for _, s := range skills {
		trust := "trusted author"
		if !s.Trusted {
			trust = "accepted by the owner, author not trusted"
		}
		fmt.Fprintf(&b, "\n\n## Skill: %s\n(skill %s, kind 4202, by %s, license %s, %s", s.Title, s.ID, npubOf(s.Author), orDash(s.License), trust)
		if s.Dir != "" {
			fmt.Fprintf(&b, "; files in %s", s.Dir)
		}
		b.WriteString(")\n\n" + strings.TrimSpace(s.Content))
	}
	eff.Prompt = b.String() + "\n"
	return eff
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
