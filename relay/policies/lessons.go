package policies

import (
	"context"
	"fmt"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/events"
)

// maxLessonRefs bounds the "e" tags one lesson check reads (the relay's
// tag limit bounds them already; this keeps the lookup small regardless).
const maxLessonRefs = 100

// RejectLessonOfNonDefinition refuses a kind-4129 lesson whose "e" names a
// stored nudge (4201) or lesson (4129): NIP-AE's "e" is the definition the
// lesson is about, and a lesson bound to a nudge or to another lesson binds
// to nothing an agent runs (the CLI refuses to write one):
//
//	invalid: kind 4129: tag "e": <id> is a nudge (kind 4201), not a definition (kind 4199)
//
// Only those two public kinds are looked for, so the answer reveals nothing
// about other events; an "e" that is not stored (yet) is accepted, as the
// definition may arrive later. Other kinds pass untouched.
func RejectLessonOfNonDefinition(q Querier) func(context.Context, *nostr.Event) (bool, string) {
	return func(ctx context.Context, evt *nostr.Event) (reject bool, msg string) {
		if evt.Kind != events.KindLesson {
			return false, ""
		}
		var ids []string
		for _, t := range evt.Tags {
			if len(t) >= 2 && t[0] == "e" && events.IsHex64(t[1]) && len(ids) < maxLessonRefs {
				ids = append(ids, t[1])
			}
		}
		if len(ids) == 0 {
			return false, ""
		}
		found, err := q.QuerySync(ctx, nostr.Filter{IDs: ids, Kinds: []int{events.KindNudge, events.KindLesson}, Limit: 1})
		if err != nil {
			return true, "error: could not read the lesson's definition"
		}
		if len(found) == 0 {
			return false, ""
		}
		what := "a nudge"
		if found[0].Kind == events.KindLesson {
			what = "a lesson"
		}
		return true, fmt.Sprintf(`invalid: kind 4129: tag "e": %s is %s (kind %d), not a definition (kind %d)`, found[0].ID, what, found[0].Kind, events.KindDefinition)
	}
}
