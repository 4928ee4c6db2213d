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
func (r *Registry) Register(raw []byte, declaringCap string) (*Schema, error) {
	s, err := Parse(raw, declaringCap)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	old, ok := r.byURI[s.URI]
	if !ok {
		r.byURI[s.URI] = s
		return s, nil
	}
	if old.Namespace != s.Namespace || !sameDoc(old.Raw, s.Raw) {
		return nil, fmt.Errorf("%w: %s is already registered (namespace %s)", ErrDuplicate, s.URI, old.Namespace)
	}
	return old, nil
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
