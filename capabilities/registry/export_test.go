package registry

// WithRelaySearch makes Search rank with the source's NIP-50 search
// (the relay's bluge index over events.CapabilitySearchText) instead of
// the in-memory word index. The in-memory index still maps hits to the
// latest version per (author, name) and applies the filters. A source
// without NIP-50 finds nothing this way. docs/REGISTRY.md compares the two; the
// node uses the in-memory index, this stays for that comparison.
func WithRelaySearch() Option {
	return func(r *Registry) { r.relaySearch = true }
}
