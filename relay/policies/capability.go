package policies

import (
	"context"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/events"
)

// GuardCapabilities holds the kind-30199 rules (ACP capability packages):
//
//   - a malformed event is refused with `invalid: <events.ValidateCapability's
//     reason>` (d = name@version, x = sha256(content), m, semver, the
//     content's metadata.id names d, a signed file is the author's);
//   - a published (author, name, version) is immutable: an event for a d
//     the author already has with other content is refused with
//     `blocked: ...`. The same content again is accepted (a duplicate).
//
// Other kinds pass untouched.
func GuardCapabilities(q Querier) func(context.Context, *nostr.Event) (bool, string) {
	return func(ctx context.Context, evt *nostr.Event) (reject bool, msg string) {
		if evt.Kind != events.KindCapability {
			return false, ""
		}
		if err := events.ValidateCapability(evt); err != nil {
			return true, "invalid: " + err.Error()
		}
		changed, err := capabilityChanged(ctx, q, evt)
		if err != nil {
			return true, "error: could not check earlier versions"
		}
		if changed {
			return true, "blocked: " + evt.Tags.GetD() + " is already published by this author with other content; publish a new version"
		}
		return false, ""
	}
}

// capabilityChanged reports whether the author already has an event for
// evt's d whose content differs ("x" compares the sha256s).
func capabilityChanged(ctx context.Context, q Querier, evt *nostr.Event) (bool, error) {
	f := nostr.Filter{Kinds: []int{events.KindCapability}, Authors: []string{evt.PubKey},
		Tags: nostr.TagMap{"d": {evt.Tags.GetD()}}}
	found, err := q.QuerySync(ctx, f)
	if err != nil {
		return false, err
	}
	x := events.ContentSHA256(evt.Content)
	for _, old := range found {
		if events.ContentSHA256(old.Content) != x {
			return true, nil
		}
	}
	return false, nil
}
