package hostile

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
)

// TestLessonBinding_boundedAndSpecific: the relay's check of a lesson's
// "e" (issue 27: a lesson bound to a nudge is refused) against the real
// binary: a stranger's lesson naming a stored nudge is refused with the
// reason; one with as many "e" tags as the relay takes, none stored, is
// answered at once and stored; the node stays healthy.
func TestLessonBinding_boundedAndSpecific(t *testing.T) {
	n := startNode(t, nil)
	c := n.client(t)
	sk := nostr.GeneratePrivateKey()
	nudge, err := publish(c, sk, 4201, nostr.Tags{{"title", "Read only"}}, "Do not change files.", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	_, err = publish(c, nostr.GeneratePrivateKey(), 4129, nostr.Tags{{"title", "x"}, {"e", nudge.ID}}, "bound to a nudge", 10*time.Second)
	if err == nil || !strings.Contains(err.Error(), "is a nudge (kind 4201), not a definition (kind 4199)") {
		t.Fatalf("a lesson whose e is a nudge: %v; want refused with the reason", err)
	}
	tags := nostr.Tags{{"title", "many refs"}}
	for i := range 500 {
		tags = append(tags, nostr.Tag{"e", fmt.Sprintf("%064x", i+1)})
	}
	if _, err := publish(c, nostr.GeneratePrivateKey(), 4129, tags, "x", 10*time.Second); err != nil && !strings.Contains(err.Error(), "tags") {
		t.Fatalf("a lesson with 500 unknown e tags: %v; want stored, or refused for its tag count", err)
	}
	if !n.healthy() {
		t.Fatal("the node is not healthy after the lessons")
	}
}
