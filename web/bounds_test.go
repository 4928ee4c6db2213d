package web_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/web"
)

// A definition with 45 lessons of 60 kB, 30 of them in one second: each
// page lists LessonPage lessons cut to MaxLessonRunes with a link to the
// whole lesson, stays small, and following "older lessons" lists every
// lesson once.
func TestSite_LessonsArePagedAndCut(t *testing.T) {
	rel, srv := openSite(t, 0)
	sk := nostr.GeneratePrivateKey()
	def := nostr.Event{Kind: 4199, CreatedAt: 1_700_000_000, Tags: nostr.Tags{{"title", "target"}}}
	mustPublish(t, rel.Publish, sk, &def)
	body := strings.Repeat("word ", 12_000)
	want := map[string]bool{}
	for i := range 45 {
		l := nostr.Event{Kind: 4129, CreatedAt: nostr.Timestamp(1_700_000_100 + i/30), Content: fmt.Sprint(i, body),
			Tags: nostr.Tags{{"e", def.ID}, {"title", fmt.Sprint("lesson ", i)}}}
		mustPublish(t, rel.Publish, nostr.GeneratePrivateKey(), &l)
		want[l.ID] = true
	}
	lessonRE := regexp.MustCompile(`<article class="lesson" id="lesson-([0-9a-f]{64})">`)
	nextRE := regexp.MustCompile(`href="\?([^"]+)" rel="next">older lessons`)
	seen, next := map[string]int{}, ""
	for range 10 {
		_, page := get(t, srv.URL+"/definitions/"+def.ID+"?"+strings.ReplaceAll(next, "&amp;", "&"))
		if len(page) > 100_000 {
			t.Errorf("a page of lessons is %d bytes", len(page))
		}
		found := lessonRE.FindAllStringSubmatch(page, -1)
		if len(found) > web.LessonPage {
			t.Errorf("a page lists %d lessons, want at most %d", len(found), web.LessonPage)
		}
		for _, m := range found {
			seen[m[1]]++
		}
		if !strings.Contains(page, "Read the whole lesson") {
			t.Error("a cut lesson has no link to the whole lesson")
		}
		m := nextRE.FindStringSubmatch(page)
		if m == nil {
			break
		}
		next = m[1]
	}
	if len(seen) != len(want) {
		t.Errorf("listed %d lessons, want %d", len(seen), len(want))
	}
	for id, n := range seen {
		if n != 1 || !want[id] {
			t.Errorf("lesson %s listed %d times", id, n)
		}
	}
	for id := range want {
		_, whole := get(t, srv.URL+"/lessons/"+id)
		if !strings.Contains(whole, body[:59_000]) {
			t.Errorf("/lessons/%s does not hold the whole lesson", id)
		}
		break
	}
}

func mustPublish(t *testing.T, publish func(context.Context, *nostr.Event) error, sk string, evt *nostr.Event) {
	t.Helper()
	if err := evt.Sign(sk); err != nil {
		t.Fatal(err)
	}
	if err := publish(context.Background(), evt); err != nil {
		t.Fatal(err)
	}
}
