package policies

import (
	"context"
	"fmt"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/events"
)

// RejectCommentRootMismatch refuses a kind-1111 comment whose declared root
// kind ("K", or the "k" of a top-level comment) contradicts the kind of the
// root event it names, when that root is stored here and either side is a
// lesson (the contradiction that decides what folds into agents' prompts;
// other kinds are not compared, so the answer reveals nothing about events
// the relay hides):
//
//	invalid: kind 1111: tag "K": root kind 1 contradicts the root event (kind 4129)
//
// A comment that declares no root kind (older clients: marked "e" root and
// reply, or "E" alone) is accepted; so is one whose root is not stored
// (comments may arrive before their roots). Readers resolve the root kind
// from the root itself. Other kinds pass untouched.
func RejectCommentRootMismatch(q Querier) func(context.Context, *nostr.Event) (bool, string) {
	return func(ctx context.Context, evt *nostr.Event) (reject bool, msg string) {
		if evt.Kind != events.KindComment {
			return false, ""
		}
		declared, ok := events.DeclaredRootKind(evt)
		root := events.RootRef(evt)
		if !ok || !events.IsHex64(root) {
			return false, ""
		}
		found, err := q.QuerySync(ctx, nostr.Filter{IDs: []string{root}, Limit: 1})
		if err != nil {
			return true, "error: could not read the comment's root"
		}
		if len(found) == 1 && found[0].Kind != declared && (declared == events.KindLesson || found[0].Kind == events.KindLesson) {
			return true, fmt.Sprintf(`invalid: kind 1111: tag "K": root kind %d contradicts the root event (kind %d)`, declared, found[0].Kind)
		}
		return false, ""
	}
}
