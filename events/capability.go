package events

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"regexp"
	"strings"

	"github.com/nbd-wtf/go-nostr"
	"gopkg.in/yaml.v3"
)

// KindCapability is an ACP capability package (project-defined, addressable):
// the content is the .acp.yaml file, byte for byte.
const KindCapability = 30199

// MIMECapability is the "m" tag of every kind-30199 event.
const MIMECapability = "application/yaml"

// Refusal reasons of kind 30199 (docs/KINDS.md spells each one).
const (
	reasonCapName     = "not a capability name"
	reasonSemVer      = "not a semantic version (semver 2.0.0)"
	reasonDMismatch   = `must be "<name>@<version>" of the name and version tags`
	reasonSHA256      = "not the sha256 of the content"
	reasonMIME        = `must be "application/yaml"`
	reasonEmptyACP    = "empty package"
	reasonOneTagOnly  = "more than one"
	reasonHex64Digest = "not a 64-hex sha256"
	reasonNotACP      = "not a YAML capability package (metadata.id missing)"
	reasonIDMismatch  = `metadata.id is not "did:nuwa:cap:" + the "d" tag`
	reasonSigner      = "metadata.signature.pubkey is not the event's author"
)

var (
	capNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
	// semVerRE is the regular expression of semver.org (2.0.0).
	semVerRE = regexp.MustCompile(`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)` +
		`(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?` +
		`(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$`)
)

// IsCapabilityName reports whether s can be the <name> of a capability URI
// (did:nuwa:cap:<name>@<semver>): 1-64 letters, digits, '.', '_' or '-',
// starting with a letter or digit.
func IsCapabilityName(s string) bool { return capNameRE.MatchString(s) }

// IsSemVer reports whether s is a semantic version (semver.org 2.0.0, no "v").
func IsSemVer(s string) bool { return semVerRE.MatchString(s) }

// Capability is the typed view of a kind-30199 event.
type Capability struct {
	ID        string
	PubKey    string
	CreatedAt nostr.Timestamp

	Name      string   // the capability name (the URI's <name>)
	Version   string   // its semver
	Title     string   // "title": the package's display name (metadata.name)
	SchemaURI string   // "schema": the package schema's $id
	Tools     []string // "tool": one per declared tool, in order
	Topics    []string // "t": the package's keyword triggers, lower-cased
	SHA256    string   // "x": sha256 of Content, 64-hex
	Content   string   // the .acp.yaml file
}

// D returns the event's "d" value, name@version.
func (c *Capability) D() string { return c.Name + "@" + c.Version }

// ContentSHA256 returns the lower-case hex sha256 of content.
func ContentSHA256(content string) string {
	sum := sha256.Sum256([]byte(content))
	return hex.EncodeToString(sum[:])
}

// validateCapability holds the kind-30199 rules.
var validateCapability = all(
	checkTagNames,
	checkCapContent,
	onlyOne("d"), onlyOne("name"), onlyOne("version"), onlyOne("x"), onlyOne("m"), onlyOne("schema"),
	required("name"),
	checkFirst("name", IsCapabilityName, reasonCapName),
	required("version"),
	checkFirst("version", IsSemVer, reasonSemVer),
	required("d"),
	checkCapD,
	required("x"),
	checkCapDigest,
	required("m"),
	checkFirst("m", func(v string) bool { return v == MIMECapability }, reasonMIME),
	required("schema"),
	nonEmpty("tool"),
	nonEmpty("t"),
	checkCapFile,
)

// ValidateCapability checks a kind-30199 event's tags against each other and
// against its content. It does not parse the package: that is
// capabilities/acp's FromEvent. A refusal is a *ValidationError.
func ValidateCapability(evt *nostr.Event) error {
	if evt == nil {
		return ErrNilEvent
	}
	if evt.Kind != KindCapability {
		return invalidBecause(evt.Kind, "kind", ErrWrongKind, "want 30199")
	}
	return validateCapability(evt)
}

func checkCapContent(evt *nostr.Event) error {
	if strings.TrimSpace(evt.Content) == "" {
		return invalidBecause(evt.Kind, "content", ErrBadContent, reasonEmptyACP)
	}
	return nil
}

// onlyOne refuses a second tag named name.
func onlyOne(name string) check {
	return func(evt *nostr.Event) error {
		if countTags(evt.Tags, name) > 1 {
			return invalidBecause(evt.Kind, name, ErrBadTag, reasonOneTagOnly)
		}
		return nil
	}
}

// checkFirst refuses an event whose first tag named name fails ok.
func checkFirst(name string, ok func(string) bool, reason string) check {
	return func(evt *nostr.Event) error {
		if v, found := firstValue(evt.Tags, name); found && !ok(v) {
			return invalidBecause(evt.Kind, name, ErrBadValue, reason)
		}
		return nil
	}
}

func checkCapD(evt *nostr.Event) error {
	if valueOf(evt.Tags, "d") != valueOf(evt.Tags, "name")+"@"+valueOf(evt.Tags, "version") {
		return invalidBecause(evt.Kind, "d", ErrBadValue, reasonDMismatch)
	}
	return nil
}

func checkCapDigest(evt *nostr.Event) error {
	x := valueOf(evt.Tags, "x")
	if !IsHex64(x) {
		return invalidBecause(evt.Kind, "x", ErrBadValue, reasonHex64Digest)
	}
	if x != ContentSHA256(evt.Content) {
		return invalidBecause(evt.Kind, "x", ErrBadValue, reasonSHA256)
	}
	return nil
}

// capFileHead is the part of the content the relay checks.
type capFileHead struct {
	Metadata struct {
		ID        string `yaml:"id"`
		Signature struct {
			PubKey string `yaml:"pubkey"`
		} `yaml:"signature"`
	} `yaml:"metadata"`
}

// checkCapFile reads metadata.id and metadata.signature.pubkey from the
// content: the id must name the "d" tag, a signed file must be the author's.
func checkCapFile(evt *nostr.Event) error {
	head, ok := readCapHead(evt.Content)
	switch {
	case !ok || head.Metadata.ID == "":
		return invalidBecause(evt.Kind, "content", ErrBadContent, reasonNotACP)
	case head.Metadata.ID != "did:nuwa:cap:"+valueOf(evt.Tags, "d"):
		return invalidBecause(evt.Kind, "content", ErrBadContent, reasonIDMismatch)
	case head.Metadata.Signature.PubKey != "" && head.Metadata.Signature.PubKey != evt.PubKey:
		return invalidBecause(evt.Kind, "content", ErrBadContent, reasonSigner)
	}
	return nil
}

// readCapHead decodes the head of a package; hostile YAML is not a panic.
func readCapHead(content string) (head capFileHead, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return head, yamlDecoded(yaml.Unmarshal([]byte(content), &head))
}

// yamlDecoded accepts a partial decode: a field of the wrong type is left
// empty (*yaml.TypeError), the rest is read.
func yamlDecoded(err error) bool {
	var te *yaml.TypeError
	return err == nil || errors.As(err, &te)
}

// ParseCapability validates a kind-30199 event and returns its typed view.
func ParseCapability(evt *nostr.Event) (*Capability, error) {
	if err := ValidateCapability(evt); err != nil {
		return nil, err
	}
	return &Capability{
		ID: evt.ID, PubKey: evt.PubKey, CreatedAt: evt.CreatedAt,
		Name:      valueOf(evt.Tags, "name"),
		Version:   valueOf(evt.Tags, "version"),
		Title:     valueOf(evt.Tags, "title"),
		SchemaURI: valueOf(evt.Tags, "schema"),
		Tools:     valuesOf(evt.Tags, "tool"),
		Topics:    valuesOf(evt.Tags, "t"),
		SHA256:    valueOf(evt.Tags, "x"),
		Content:   evt.Content,
	}, nil
}

// Template returns the unsigned kind-30199 event for c (CreatedAt left to
// the caller). "x" is always computed from Content; SHA256 is ignored.
func (c *Capability) Template() nostr.Event {
	tags := nostr.Tags{{"d", c.D()}, {"name", c.Name}, {"version", c.Version}}
	tags = appendOpt(tags, "title", c.Title)
	tags = append(tags,
		nostr.Tag{"x", ContentSHA256(c.Content)},
		nostr.Tag{"m", MIMECapability},
		nostr.Tag{"schema", c.SchemaURI})
	tags = appendEach(tags, "tool", c.Tools)
	tags = appendEach(tags, "t", c.Topics)
	tags = append(tags, nostr.Tag{"alt", "ACP capability package " + c.D()})
	return nostr.Event{Kind: KindCapability, Tags: tags, Content: c.Content}
}

// capSearchDoc is the part of a package that NIP-50 search indexes.
type capSearchDoc struct {
	Metadata struct {
		Name        string `yaml:"name"`
		Description string `yaml:"description"`
		Triggers    []struct {
			Value string `yaml:"value"`
		} `yaml:"triggers"`
	} `yaml:"metadata"`
	Tools []struct {
		Function struct {
			Name        string `yaml:"name"`
			Description string `yaml:"description"`
		} `yaml:"function"`
	} `yaml:"tools"`
}

// CapabilitySearchText is the text NIP-50 search indexes for a kind-30199
// event: the name and version tags, then from the content the display name,
// description, trigger values and each tool's name and description. Content
// that is not YAML contributes nothing.
func CapabilitySearchText(evt *nostr.Event) string {
	var b strings.Builder
	add := func(s string) {
		if s = strings.TrimSpace(s); s != "" {
			b.WriteString(s)
			b.WriteByte('\n')
		}
	}
	add(valueOf(evt.Tags, "name"))
	add(valueOf(evt.Tags, "version"))
	doc, ok := readCapSearchDoc(evt.Content)
	if !ok {
		return b.String()
	}
	add(doc.Metadata.Name)
	add(doc.Metadata.Description)
	for _, t := range doc.Metadata.Triggers {
		add(t.Value)
	}
	for _, t := range doc.Tools {
		add(t.Function.Name)
		add(t.Function.Description)
	}
	return b.String()
}

func readCapSearchDoc(content string) (doc capSearchDoc, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return doc, yamlDecoded(yaml.Unmarshal([]byte(content), &doc))
}
