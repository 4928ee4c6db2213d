package events

import (
	"encoding/json"
	"net/url"
	"strconv"
	"strings"

	"github.com/nbd-wtf/go-nostr"
)

// check is one validation rule: nil, or a *ValidationError naming the tag.
type check func(evt *nostr.Event) error

// Validate checks an event of any kind this package knows and returns nil for
// kinds it does not know. Kind 0 is checked only when it carries ["bot"].
// A refusal is a *ValidationError; the relay sends it as "invalid: " + Error().
func Validate(evt *nostr.Event) error {
	if evt == nil {
		return ErrNilEvent
	}
	if v := validatorFor(evt); v != nil {
		return v(evt)
	}
	return nil
}

// validatorFor returns the rules for evt's kind, or nil when there are none.
func validatorFor(evt *nostr.Event) check {
	switch evt.Kind {
	case KindProfile:
		if firstTag(evt.Tags, "bot") != nil {
			return validateBotProfile
		}
	case KindDeletion:
		return validateDeletion
	case KindComment:
		return validateComment
	case KindLesson:
		return validateLesson
	case KindDefinition:
		return validateDefinition
	case KindNudge:
		return validateNudge
	case KindOwnerClaims:
		return validateOwnerClaims
	case KindHeartbeat:
		return ValidateHeartbeat
	case KindLabel:
		if IsEvaluation(evt) {
			return ValidateEvaluation
		}
	}
	return nil
}

// validateDeletion: NIP-09 "e" values are event ids, "k" values kind numbers.
var validateDeletion = all(
	checkTagNames,
	eachValue("e", IsHex64, ErrBadID, ErrBadID.Error()),
	eachValue("k", isKind, ErrBadValue, reasonKindNumber),
)

// all runs checks in order and returns the first failure.
func all(checks ...check) check {
	return func(evt *nostr.Event) error {
		for _, c := range checks {
			if err := c(evt); err != nil {
				return err
			}
		}
		return nil
	}
}

// checkTagNames refuses tags with an empty name (including empty tags).
func checkTagNames(evt *nostr.Event) error {
	for _, t := range evt.Tags {
		if len(t) == 0 || t[0] == "" {
			return invalidBecause(evt.Kind, "", ErrBadTag, reasonEmptyTagName)
		}
	}
	return nil
}

// eachValue refuses the first tag named name whose value fails ok.
func eachValue(name string, ok func(string) bool, err error, reason string) check {
	return func(evt *nostr.Event) error {
		for _, t := range evt.Tags {
			if isTag(t, name) && !ok(tagAt(t, 1)) {
				return invalidBecause(evt.Kind, name, err, reason)
			}
		}
		return nil
	}
}

// nonEmpty refuses any tag named name whose value is blank.
func nonEmpty(name string) check {
	return eachValue(name, func(v string) bool { return !blank(v) }, ErrBadValue, reasonEmptyValue)
}

// required refuses an event whose first tag named name is absent or blank.
func required(name string) check {
	return func(evt *nostr.Event) error {
		v, ok := firstValue(evt.Tags, name)
		if !ok {
			return invalid(evt.Kind, name, ErrMissingTag)
		}
		if blank(v) {
			return invalidBecause(evt.Kind, name, ErrBadValue, reasonEmptyValue)
		}
		return nil
	}
}

// checkJSONObject refuses content that is not a single JSON object.
func checkJSONObject(evt *nostr.Event) error {
	if !isJSONObject(evt.Content) {
		return invalidBecause(evt.Kind, "content", ErrBadContent, reasonJSONObject)
	}
	return nil
}

// isJSONObject reports whether s is valid JSON whose top level is an object.
func isJSONObject(s string) bool {
	t := strings.TrimLeft(s, " \t\r\n")
	return strings.HasPrefix(t, "{") && json.Valid([]byte(s))
}

// isKind reports whether s is a decimal kind number.
func isKind(s string) bool {
	_, ok := parseKind(s)
	return ok
}

// unsafeSchemes are URI schemes that run code or read the viewer's files
// when a client follows or renders them.
var unsafeSchemes = map[string]bool{"javascript": true, "vbscript": true, "file": true}

// isSafeImageURI reports whether s is an absolute URI a client may render as
// an image: any scheme (http(s), ipfs, blossom, ...) except those that run
// code or read local files, and data: only with an image/ media type.
func isSafeImageURI(s string) bool {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil || u.Scheme == "" {
		return false
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme == "data" {
		return strings.HasPrefix(strings.ToLower(u.Opaque), "image/") && !strings.HasPrefix(strings.ToLower(u.Opaque), "image/svg")
	}
	return !unsafeSchemes[scheme]
}

// checkKind is the common preamble of every parser: right kind, then Validate.
func checkKind(evt *nostr.Event, want int) error {
	if evt == nil {
		return ErrNilEvent
	}
	if evt.Kind != want {
		return invalidBecause(evt.Kind, "kind", ErrWrongKind, "want "+strconv.Itoa(want))
	}
	return Validate(evt)
}
