package agentd

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip19"

	"github.com/agentnode/agentnode/agentd/state/schema"
	"github.com/agentnode/agentnode/capabilities/acp"
	"github.com/agentnode/agentnode/events"
)

// CapInstallRequest names the package to install on an agent: Ref on the
// node's relay (did:nuwa:cap:<name>[@<semver>], <name>[@<semver>] or a
// kind-30199 naddr; no version = the latest), or YAML, the bytes of a
// signed local .acp.yaml (`agentnode cap sign`).
type CapInstallRequest struct {
	Ref    string `json:"ref,omitempty"`
	Author string `json:"author,omitempty"` // npub or hex: only packages by this author
	YAML   string `json:"yaml,omitempty"`
}

// CapUpgradeRequest asks for another version of an installed capability:
// To (a version, name@version, cap URI or naddr; "" = the latest by the
// same author) or YAML (a signed local file of the same capability).
// Permissions the new version adds must be accepted.
type CapUpgradeRequest struct {
	To                string `json:"to,omitempty"`
	YAML              string `json:"yaml,omitempty"`
	AcceptPermissions bool   `json:"accept_permissions,omitempty"`
}

// CapChange answers install, upgrade and remove.
type CapChange struct {
	Agent    string        `json:"agent"` // 64-hex
	Cap      InstalledCap  `json:"cap"`
	Previous *InstalledCap `json:"previous,omitempty"` // upgrade: the version replaced
	Changed  bool          `json:"changed"`            // false: already installed / up to date
	// PermissionsAdded and PermissionsRemoved compare an upgrade's grants.
	PermissionsAdded   []string `json:"permissions_added,omitempty"`
	PermissionsRemoved []string `json:"permissions_removed,omitempty"`
	Note               string   `json:"note,omitempty"`
}

// checked is a package that passed every install check.
type checked struct {
	pkg     *acp.Package
	author  string
	eventID string
	naddr   string
}

// Caps lists the capabilities installed on the agent, in install order.
func (d *Daemon) Caps(ctx context.Context, agent string) ([]InstalledCap, error) {
	a, err := d.Lookup(agent)
	if err != nil {
		return nil, err
	}
	return d.caps.load(ctx, a.PubKey)
}

// InstallCap installs a capability package on the agent: resolved on the
// relay (the kind-30199 event's signature covers the file) or given as a
// signed file (metadata.signature must verify: unsigned or tampered files
// are refused with the reason). The package is parsed and its schema
// checked, the schema registered with the state runtime, the file cached
// under <data>/agents/<agent>/caps/ and the installation recorded in
// caps.json. Installing the same package again changes nothing; another
// version of an installed capability is refused (ErrCapInstalled: upgrade).
func (d *Daemon) InstallCap(ctx context.Context, agent string, req CapInstallRequest) (CapChange, error) {
	a, err := d.Lookup(agent)
	if err != nil {
		return CapChange{}, err
	}
	c, err := d.obtain(ctx, req.Ref, req.Author, req.YAML, trustedAuthors(a))
	if err != nil {
		return CapChange{}, err
	}
	d.caps.write.Lock()
	defer d.caps.write.Unlock()
	caps, err := d.caps.load(ctx, a.PubKey)
	if err != nil {
		return CapChange{}, err
	}
	if i := findCap(caps, c.pkg.Name()); i >= 0 {
		if caps[i].SHA256 == sha256hex(c.pkg.Raw) {
			return CapChange{Agent: a.PubKey, Cap: caps[i], Note: "already installed"}, nil
		}
		return CapChange{}, fmt.Errorf("%w: %s is installed; run `agentnode agent cap upgrade %s %s`", ErrCapInstalled, caps[i].ID, a.Name, c.pkg.Name())
	}
	rec, err := d.put(ctx, a.PubKey, c)
	if err != nil {
		return CapChange{}, err
	}
	if err := d.caps.save(ctx, a.PubKey, append(caps, rec)); err != nil {
		return CapChange{}, err
	}
	d.capsChanged(ctx, a.PubKey)
	d.log.Info("capability installed", "agent", a.PubKey, "cap", rec.ID, "author", rec.Author, "event", rec.EventID)
	return CapChange{Agent: a.PubKey, Cap: rec, Changed: true}, nil
}

// RemoveCap uninstalls a capability from the agent: its record and cached
// file go. Its state stays in the store (reinstalling it gives it back;
// `agentnode state` reaches it meanwhile).
func (d *Daemon) RemoveCap(ctx context.Context, agent, capRef string) (CapChange, error) {
	a, err := d.Lookup(agent)
	if err != nil {
		return CapChange{}, err
	}
	d.caps.write.Lock()
	defer d.caps.write.Unlock()
	caps, err := d.caps.load(ctx, a.PubKey)
	if err != nil {
		return CapChange{}, err
	}
	i := findCap(caps, capRef)
	if i < 0 {
		return CapChange{}, fmt.Errorf("%w: %q", ErrCapNotInstalled, capRef)
	}
	rec := caps[i]
	if err := d.caps.save(ctx, a.PubKey, slices.Delete(caps, i, i+1)); err != nil {
		return CapChange{}, err
	}
	if err := d.caps.dropFile(ctx, a.PubKey, rec.File); err != nil {
		d.log.Warn("capability removed but its cached file stays", "agent", a.PubKey, "cap", rec.ID, "err", err)
	}
	d.capsChanged(ctx, a.PubKey)
	d.log.Info("capability removed", "agent", a.PubKey, "cap", rec.ID)
	note := fmt.Sprintf("its state stays in the store (schema %s, scope %s); installing it again gives it back", rec.SchemaURI, rec.MemoryScope)
	return CapChange{Agent: a.PubKey, Cap: rec, Changed: true, Note: note}, nil
}

// UpgradeCap moves an installed capability to another version: the latest
// by the same author, or req.To, or a signed file. Permissions the new
// version adds are refused (ErrPermissionsAdded, nothing changes) unless
// req.AcceptPermissions; the answer lists what was added and removed.
func (d *Daemon) UpgradeCap(ctx context.Context, agent, capRef string, req CapUpgradeRequest) (CapChange, error) {
	a, err := d.Lookup(agent)
	if err != nil {
		return CapChange{}, err
	}
	cur, err := d.installedCap(ctx, a.PubKey, capRef)
	if err != nil {
		return CapChange{}, err
	}
	var ref, author string
	if strings.TrimSpace(req.YAML) == "" {
		ref, author = upgradeRef(cur, req.To)
	} else if strings.TrimSpace(req.To) != "" {
		return CapChange{}, fmt.Errorf("%w: give a version or a file, not both", ErrBadRequest)
	}
	c, err := d.obtain(ctx, ref, author, req.YAML, trustedAuthors(a))
	if err != nil {
		return CapChange{}, err
	}
	if c.pkg.Name() != cur.Name {
		return CapChange{}, fmt.Errorf("%w: %s is not a version of %s", ErrBadRequest, c.pkg.Metadata.ID, cur.Name)
	}
	d.caps.write.Lock()
	defer d.caps.write.Unlock()
	return d.replace(ctx, a.PubKey, cur, c, req.AcceptPermissions)
}

// replace swaps cur for c in the agent's caps.json. The caller holds
// d.caps.write.
func (d *Daemon) replace(ctx context.Context, agent string, cur InstalledCap, c checked, accept bool) (CapChange, error) {
	caps, err := d.caps.load(ctx, agent)
	if err != nil {
		return CapChange{}, err
	}
	i := findCap(caps, cur.Name)
	if i < 0 {
		return CapChange{}, fmt.Errorf("%w: %q", ErrCapNotInstalled, cur.Name)
	}
	old := caps[i]
	change := CapChange{Agent: agent, Previous: &old,
		PermissionsAdded:   missingFrom(c.pkg.Metadata.Permissions.Require, old.Permissions),
		PermissionsRemoved: missingFrom(old.Permissions, c.pkg.Metadata.Permissions.Require)}
	if old.SHA256 == sha256hex(c.pkg.Raw) {
		change.Cap, change.Previous, change.Note = old, nil, "up to date"
		return change, nil
	}
	if len(change.PermissionsAdded) > 0 && !accept {
		return CapChange{}, fmt.Errorf("%w: %s adds %s; accept them to upgrade (--accept-permissions)", ErrPermissionsAdded, c.pkg.Metadata.ID, strings.Join(change.PermissionsAdded, ", "))
	}
	rec, err := d.put(ctx, agent, c)
	if err != nil {
		return CapChange{}, err
	}
	rec.InstalledAt, rec.UpgradedAt = old.InstalledAt, now()
	caps[i] = rec
	if err := d.caps.save(ctx, agent, caps); err != nil {
		return CapChange{}, err
	}
	if rec.File != old.File {
		if err := d.caps.dropFile(ctx, agent, old.File); err != nil {
			d.log.Warn("old cached package stays", "agent", agent, "file", old.File, "err", err)
		}
	}
	d.capsChanged(ctx, agent)
	d.log.Info("capability upgraded", "agent", agent, "from", old.ID, "to", rec.ID)
	change.Cap, change.Changed = rec, true
	return change, nil
}

// upgradeRef is what an upgrade resolves: to as given (a bare version is
// the capability's), else the capability's latest by the same author.
func upgradeRef(cur InstalledCap, to string) (ref, author string) {
	to = strings.TrimSpace(to)
	switch {
	case to == "":
		return cur.Name, cur.Author
	case isSemverish(to):
		return cur.Name + "@" + to, cur.Author
	}
	return to, ""
}

// isSemverish: a bare version ("1.2.0", "v1.2.0") rather than a reference.
func isSemverish(s string) bool {
	s = strings.TrimPrefix(s, "v")
	return s != "" && s[0] >= '0' && s[0] <= '9' && !strings.Contains(s, ":")
}

// obtain gets a package from a signed file or the resolver and checks it;
// trusted are the authors the resolver prefers when several publish the
// name (trustedAuthors).
func (d *Daemon) obtain(ctx context.Context, ref, author, yaml string, trusted []string) (checked, error) {
	if strings.TrimSpace(yaml) != "" {
		if strings.TrimSpace(ref) != "" {
			return checked{}, fmt.Errorf("%w: give a reference or a file, not both", ErrBadRequest)
		}
		return d.fromFile([]byte(yaml))
	}
	if strings.TrimSpace(ref) == "" {
		return checked{}, fmt.Errorf("%w: a capability reference or a signed file is required", ErrBadRequest)
	}
	if author != "" {
		pk, err := events.ParsePubKey(author)
		if err != nil {
			return checked{}, fmt.Errorf("%w: author: %v", ErrBadRequest, err)
		}
		author = pk
	}
	evt, err := d.resolver().ResolveCapability(ctx, strings.TrimSpace(ref), author, trusted...)
	if err != nil {
		return checked{}, resolveError(ref, err)
	}
	return d.fromEvent(evt)
}

// fromFile verifies and parses a signed local file.
func (d *Daemon) fromFile(raw []byte) (checked, error) {
	author, err := acp.Verify(raw)
	switch {
	case errors.Is(err, acp.ErrUnsigned):
		return checked{}, fmt.Errorf("%w: the file is not signed (sign it with `agentnode cap sign`): %v", ErrCapRefused, err)
	case errors.Is(err, acp.ErrBadSignature):
		return checked{}, fmt.Errorf("%w: the signature does not verify (was the file changed after signing?): %v", ErrCapRefused, err)
	case err != nil:
		return checked{}, fmt.Errorf("%w: %v", ErrCapRefused, err)
	}
	p, err := acp.Parse(raw, acp.Options{})
	if err != nil {
		return checked{}, fmt.Errorf("%w: %v", ErrCapRefused, err)
	}
	if err := d.checkSchema(p); err != nil {
		return checked{}, err
	}
	return checked{pkg: p, author: author}, nil
}

// fromEvent checks a kind-30199 event (signature, tags against content,
// then Parse).
func (d *Daemon) fromEvent(evt *nostr.Event) (checked, error) {
	p, err := acp.FromEvent(evt, acp.Options{})
	if err != nil {
		return checked{}, fmt.Errorf("%w: event %s: %v", ErrCapRefused, evt.ID, err)
	}
	if err := d.checkSchema(p); err != nil {
		return checked{}, err
	}
	naddr, _ := nip19.EncodeEntity(evt.PubKey, evt.Kind, evt.Tags.GetD(), nil)
	return checked{pkg: p, author: evt.PubKey, eventID: evt.ID, naddr: naddr}, nil
}

// checkSchema runs Config.Schemas (default: the state runtime's parser)
// on the package's schema.
func (d *Daemon) checkSchema(p *acp.Package) error {
	check := d.cfg.Schemas
	if check == nil {
		check = func(capID string, raw json.RawMessage) error {
			_, err := schema.Parse(raw, capID)
			return err
		}
	}
	if err := check(p.Metadata.ID, p.Schema); err != nil {
		return fmt.Errorf("%w: schema %s: %v", ErrCapRefused, p.SchemaURI(), err)
	}
	return nil
}

// put registers the package's schema with the state runtime and caches the
// file; it returns the record to store.
func (d *Daemon) put(ctx context.Context, agent string, c checked) (InstalledCap, error) {
	p := c.pkg
	if d.cfg.State != nil {
		if _, err := d.cfg.State.Register(ctx, p.Metadata.ID, p.Schema); err != nil {
			return InstalledCap{}, fmt.Errorf("%w: register schema %s: %v", ErrCapRefused, p.SchemaURI(), err)
		}
	}
	rel, err := d.caps.cacheFile(ctx, agent, p.Name(), p.Version(), p.Raw)
	if err != nil {
		return InstalledCap{}, err
	}
	d.caps.remember(p)
	return InstalledCap{ID: p.Metadata.ID, Name: p.Name(), Version: p.Version(), Title: p.Metadata.Name,
		Author: c.author, EventID: c.eventID, Naddr: c.naddr, SHA256: sha256hex(p.Raw),
		SchemaURI: p.SchemaURI(), MemoryScope: p.Metadata.MemoryScope,
		Permissions: nonNil(slices.Clone(p.Metadata.Permissions.Require)), Tools: nonNil(p.ToolNames()),
		NotCallable: p.NotCallable(), Warnings: p.WarningStrings(),
		File: rel, InstalledAt: now()}, nil
}

// installedCap returns the agent's installed capability named by ref.
func (d *Daemon) installedCap(ctx context.Context, agent, ref string) (InstalledCap, error) {
	caps, err := d.caps.load(ctx, agent)
	if err != nil {
		return InstalledCap{}, err
	}
	i := findCap(caps, ref)
	if i < 0 {
		return InstalledCap{}, fmt.Errorf("%w: %q", ErrCapNotInstalled, ref)
	}
	return caps[i], nil
}

// pkg returns the parsed package of an installed capability, from the
// cache or the cached file (whose hash must still match the record).
func (d *Daemon) pkg(ctx context.Context, agent string, ic InstalledCap) (*acp.Package, error) {
	if p := d.caps.cached(ic.SHA256); p != nil {
		return p, nil
	}
	raw, err := d.caps.readFile(ctx, agent, ic.File)
	if err != nil {
		return nil, err
	}
	if sha256hex(raw) != ic.SHA256 {
		return nil, fmt.Errorf("agentd: cached package %s changed on disk (sha256 mismatch): reinstall it", ic.File)
	}
	p, err := acp.Parse(raw, acp.Options{})
	if err != nil {
		return nil, fmt.Errorf("agentd: cached package %s: %w", ic.File, err)
	}
	d.caps.remember(p)
	return p, nil
}

// remember caches a parsed package by the hash of its file.
func (s *capsState) remember(p *acp.Package) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.packages[sha256hex(p.Raw)] = p
}

func (s *capsState) cached(sha string) *acp.Package {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.packages[sha]
}

// resolveError keeps the resolver's not-found as ErrCapNotFound.
func resolveError(ref string, err error) error {
	if errors.Is(err, ErrCapNotFound) || isNotFound(err) {
		return fmt.Errorf("%w: %q: %v", ErrCapNotFound, ref, err)
	}
	if errors.Is(err, ErrBadRequest) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("%w: %q: %v", ErrBadRequest, ref, err)
}

// missingFrom lists the items of a that b lacks.
func missingFrom(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func sha256hex(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}
