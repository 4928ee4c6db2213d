package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"sync"
)

// Registry holds the schemas a runtime knows, by URI. It starts with the
// core models. It is safe for concurrent use.
type Registry struct {
	mu    sync.RWMutex
	byURI map[string]*Schema
}

// NewRegistry returns a registry holding the core models.
func NewRegistry() *Registry {
	r := &Registry{byURI: map[string]*Schema{}}
	for _, s := range Core() {
		r.byURI[s.URI] = s
	}
	return r
}

// Register parses raw as declared by capability declaringCap and adds it.
// Registering the same URI again is a no-op when the capability name and
// the content (compared as JSON) are the same; otherwise it fails with
// ErrDuplicate (NIP-8: no duplicate DID + state path except by version
// bump). Core URIs cannot be registered.
//
// Ownership (docs/CAP.md "State URIs"): a URI of the ACP form
// did:nuwa:state:<name>#<ver> is in capability <name>'s namespace.
// Capability <name> may always declare it: if another capability took it
// first, the owner takes it over. Another capability may declare it only
// while capability <name> has registered nothing here; once it has, the
// name is refused (ErrDuplicate) to every other capability. So a
// stranger's package installed first can never keep the real capability
// from bumping to a version it squatted.
func (r *Registry) Register(raw []byte, declaringCap string) (*Schema, error) {
	s, err := Parse(raw, declaringCap)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	old, ok := r.byURI[s.URI]
	switch {
	case !ok:
		if err := r.checkForeign(s); err != nil {
			return nil, err
		}
		r.byURI[s.URI] = s
		return s, nil
	case old.Namespace == s.Namespace && sameDoc(old.Raw, s.Raw):
		return old, nil
	case old.Namespace != s.Namespace && s.ownsName():
		r.byURI[s.URI] = s // taken back from the capability that squatted it
		return s, nil
	}
	return nil, fmt.Errorf("%w: %s is already registered (namespace %s)", ErrDuplicate, s.URI, old.Namespace)
}

// checkForeign refuses a did:nuwa:state:<name> URI declared by a
// capability other than <name> once capability <name> has registered a
// schema here. r.mu is held.
func (r *Registry) checkForeign(s *Schema) error {
	owner, declared := s.claimedName()
	if !declared || owner == s.Namespace.Name {
		return nil
	}
	for _, o := range r.byURI {
		if o.Namespace.Kind == KindCap && o.Namespace.Name == owner {
			return fmt.Errorf("%w: %s is in capability %s's namespace: only %s may declare it (capability %s declares did:nuwa:state:%s#...)",
				ErrDuplicate, s.URI, owner, owner, s.Namespace.Name, s.Namespace.Name)
		}
	}
	return nil
}

// claimedName is <name> of a did:nuwa:state:<name>#<ver> URI (declared
// true); other forms name their namespace explicitly.
func (s *Schema) claimedName() (name string, declared bool) {
	info, err := ParseURI(s.URI)
	if err != nil || !info.Declared {
		return "", false
	}
	return info.Name, true
}

// ownsName: s is a did:nuwa:state:<name> URI declared by capability <name>.
func (s *Schema) ownsName() bool {
	name, declared := s.claimedName()
	return declared && s.Namespace.Kind == KindCap && name == s.Namespace.Name
}

// Lookup returns the schema registered under uri.
func (r *Registry) Lookup(uri string) (*Schema, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	s, ok := r.byURI[uri]
	return s, ok
}

// All returns every schema, sorted by URI.
func (r *Registry) All() []*Schema {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]*Schema, 0, len(r.byURI))
	for _, s := range r.byURI {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].URI < out[j].URI })
	return out
}

// sameDoc compares two JSON documents ignoring formatting.
func sameDoc(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(a, b)
	}
	return sameJSON(x, y)
}
