package acp

import (
	"fmt"
	"strings"

	"github.com/agentnode/agentnode/events"
)

// CapURIPrefix starts every capability URI.
const CapURIPrefix = "did:nuwa:cap:"

// ParseCapURI splits did:nuwa:cap:<name>[@<semver>] into its name and
// version ("" when absent: the latest). The bare form <name>[@<semver>] is
// accepted too. Errors wrap ErrBadCapURI.
func ParseCapURI(s string) (name, version string, err error) {
	name, version, why := splitCapURI(strings.TrimPrefix(strings.TrimSpace(s), CapURIPrefix))
	if why != "" {
		return "", "", fmt.Errorf("%w: %q: %s", ErrBadCapURI, s, why)
	}
	return name, version, nil
}

// CapURI returns did:nuwa:cap:<name>@<version>.
func CapURI(name, version string) string { return CapURIPrefix + name + "@" + version }

// splitCapURI splits <name>[@<semver>] and says what is wrong, if anything.
func splitCapURI(s string) (name, version, why string) {
	name, version, hasAt := strings.Cut(s, "@")
	switch {
	case !events.IsCapabilityName(name):
		return "", "", fmt.Sprintf("the name %q is not 1-64 of A-Z a-z 0-9 . _ - (starting with a letter or digit)", name)
	case hasAt && !events.IsSemVer(version):
		return "", "", fmt.Sprintf("%q is not a semantic version (semver 2.0.0)", version)
	}
	return name, version, ""
}

// parseCapID checks metadata.id: the full form, with a version.
func parseCapID(id string) (name, version, why string) {
	rest, ok := strings.CutPrefix(id, CapURIPrefix)
	if !ok || !strings.Contains(rest, "@") {
		return "", "", fmt.Sprintf("%q is not did:nuwa:cap:<name>@<semver>", id)
	}
	name, version, why = splitCapURI(rest)
	if why != "" {
		why = fmt.Sprintf("%q is not did:nuwa:cap:<name>@<semver>: %s", id, why)
	}
	return name, version, why
}
