package schema

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
)

// Namespace kinds (NIP-8 "Namespace Rules"). Storage is table-isolated per
// namespace: every (kind, name) pair has its own tables.
const (
	KindCore = "core" // did:nuwa:core:<Model>#<ver>
	KindCap  = "cap"  // did:nuwa:cap:<cap_id>:state:<Name>#<ver>, and did:nuwa:state:<name>#<ver> of the declaring capability
	KindApp  = "app"  // did:nuwa:app:<app>:state:<Name>#<ver>
	KindUser = "user" // did:nuwa:user:<did_suffix>:state:<Name>#<ver>
)

// Namespace is where a schema's documents live: a kind and, except for
// core, a name (the capability name, app name or user DID suffix).
type Namespace struct {
	Kind string `json:"kind"`
	Name string `json:"name,omitempty"`
}

// Prefix returns the table prefix of the namespace: "core", or
// "<kind>_<name>" with the name lower-cased and reduced to [a-z0-9_]. A name
// that had to be changed gets a short hash of the original appended, so two
// names never share tables.
func (n Namespace) Prefix() string {
	if n.Kind == KindCore {
		return KindCore
	}
	return n.Kind + "_" + sanitize(n.Name)
}

// Tables returns the names of the namespace's documents, op log and
// snapshot tables.
func (n Namespace) Tables() (docs, ops, snaps string) {
	p := n.Prefix()
	return p + "_docs", p + "_ops", p + "_snaps"
}

// String renders "kind" or "kind:name".
func (n Namespace) String() string {
	if n.Name == "" {
		return n.Kind
	}
	return n.Kind + ":" + n.Name
}

var (
	segmentRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._@-]{0,127}$`)
	versionRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,31}$`)
	prefixRE  = regexp.MustCompile(`^[a-z][a-z0-9_]{0,62}$`)
)

// ValidPrefix reports whether p is a table prefix this package can make.
func ValidPrefix(p string) bool { return prefixRE.MatchString(p) }

// sanitize lower-cases name, maps every other character to '_', bounds the
// length and appends a hash of name when anything changed.
func sanitize(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	s := b.String()
	if len(s) > 40 {
		s = s[:40]
	}
	if s != name {
		sum := sha256.Sum256([]byte(name))
		s += "_" + hex.EncodeToString(sum[:4])
	}
	return s
}

// URIInfo is what a schema URI says: its namespace, its state name and its
// version. Declared is true for the ACP form did:nuwa:state:<name>#<ver>,
// whose namespace is the declaring capability's.
type URIInfo struct {
	Namespace Namespace
	Name      string
	Version   string
	Declared  bool
}

// ParseURI parses a schema URI of one of the NIP-8 namespace forms, or the
// ACP form did:nuwa:state:<name>#<ver> (Namespace.Kind is then KindCap and
// Namespace.Name empty: the caller fills in the declaring capability).
func ParseURI(uri string) (URIInfo, error) {
	rest, ok := strings.CutPrefix(uri, "did:nuwa:")
	base, ver, hasVer := strings.Cut(rest, "#")
	if !ok || !hasVer || !versionRE.MatchString(ver) {
		return URIInfo{}, uriErr(uri, "want did:nuwa:...#<version>")
	}
	info, err := parseBase(strings.Split(base, ":"))
	if err != nil {
		return URIInfo{}, uriErr(uri, err.Error())
	}
	info.Version = ver
	return info, nil
}

func parseBase(p []string) (URIInfo, error) {
	if err := checkSegments(p); err != nil {
		return URIInfo{}, err
	}
	switch {
	case len(p) == 2 && p[0] == KindCore:
		return URIInfo{Namespace: Namespace{Kind: KindCore}, Name: p[1]}, nil
	case len(p) == 2 && p[0] == "state":
		return URIInfo{Namespace: Namespace{Kind: KindCap}, Name: p[1], Declared: true}, nil
	case len(p) == 4 && p[2] == "state" && (p[0] == KindCap || p[0] == KindApp || p[0] == KindUser):
		name := p[1]
		if p[0] == KindCap {
			name = CapName(name)
		}
		return URIInfo{Namespace: Namespace{Kind: p[0], Name: name}, Name: p[3]}, nil
	}
	return URIInfo{}, fmt.Errorf("unknown namespace form (core:<Model>, cap|app|user:<name>:state:<Name>, state:<name>)")
}

func checkSegments(p []string) error {
	for _, s := range p {
		if !segmentRE.MatchString(s) {
			return fmt.Errorf("bad segment %q", s)
		}
	}
	return nil
}

func uriErr(uri, why string) error {
	return fmt.Errorf("%w: schema URI %q: %s", ErrInvalidSchema, uri, why)
}

// CapName returns the capability name of a capability id:
// "did:nuwa:cap:note@1.0.0", "note@1.0.0" and "note" all give "note". Tables
// are per capability name, so a version bump keeps its data.
func CapName(capID string) string {
	name := strings.TrimPrefix(capID, "did:nuwa:cap:")
	name, _, _ = strings.Cut(name, "@")
	return name
}
