package web_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"
)

// /lessons lists the lessons on every definition, newest first, 20 a
// page, and "older lessons" walks each exactly once.
func TestSite_RecentLessonsWalkEveryLessonOnce(t *testing.T) {
	rel, srv := openSite(t, 0)
	sk := nostr.GeneratePrivateKey()
	want := map[string]bool{}
	for d := range 2 {
		def := nostr.Event{Kind: 4199, CreatedAt: 1_700_000_000, Tags: nostr.Tags{{"title", fmt.Sprint("def ", d)}}}
		mustPublish(t, rel.Publish, sk, &def)
		for i := range 13 { // 26 lessons, 10 in one second
			l := nostr.Event{Kind: 4129, CreatedAt: nostr.Timestamp(1_700_000_100 + i%4), Content: fmt.Sprint("lesson ", d, i),
				Tags: nostr.Tags{{"e", def.ID}, {"title", fmt.Sprint("lesson ", d, " ", i)}}}
			mustPublish(t, rel.Publish, nostr.GeneratePrivateKey(), &l)
			want[l.ID] = true
		}
	}
	lessonRE := regexp.MustCompile(`<article class="lesson" id="lesson-([0-9a-f]{64})">`)
	nextRE := regexp.MustCompile(`href="\?([^"]+)" rel="next">older lessons`)
	seen, next, pages := map[string]int{}, "", 0
	for pages < 5 {
		_, page := get(t, srv.URL+"/lessons?"+strings.ReplaceAll(next, "&amp;", "&"))
		pages++
		for _, m := range lessonRE.FindAllStringSubmatch(page, -1) {
			seen[m[1]]++
		}
		m := nextRE.FindStringSubmatch(page)
		if m == nil {
			break
		}
		next = m[1]
	}
	if pages != 2 || len(seen) != len(want) {
		t.Fatalf("%d pages listed %d distinct lessons, want 2 pages and %d", pages, len(seen), len(want))
	}
	for id, n := range seen {
		if !want[id] || n != 1 {
			t.Errorf("lesson %s listed %d times (one of ours: %v)", id, n, want[id])
		}
	}
}

// A lesson's page lists the NIP-22 comments whose root is that lesson,
// as text, each with its nostr: link, and not the comments on another.
func TestSite_LessonPageListsItsComments(t *testing.T) {
	rel, srv := openSite(t, 0)
	sk := nostr.GeneratePrivateKey()
	pk, _ := nostr.GetPublicKey(sk)
	def := nostr.Event{Kind: 4199, CreatedAt: 1_700_000_000, Tags: nostr.Tags{{"title", "d"}}}
	mustPublish(t, rel.Publish, sk, &def)
	var lessons [2]nostr.Event
	for i := range lessons {
		lessons[i] = nostr.Event{Kind: 4129, CreatedAt: 1_700_000_100, Content: fmt.Sprint("l", i), Tags: nostr.Tags{{"e", def.ID}, {"title", fmt.Sprint("l", i)}}}
		mustPublish(t, rel.Publish, sk, &lessons[i])
	}
	comment := func(l nostr.Event, text string) {
		c := nostr.Event{Kind: 1111, CreatedAt: 1_700_000_200, Content: text,
			Tags: nostr.Tags{{"E", l.ID, "", pk}, {"K", "4129"}, {"P", pk}, {"e", l.ID, "", pk}, {"k", "4129"}, {"p", pk}}}
		mustPublish(t, rel.Publish, nostr.GeneratePrivateKey(), &c)
	}
	comment(lessons[0], "<b>on the first</b>")
	comment(lessons[1], "on the second")
	_, page := get(t, srv.URL+"/lessons/"+lessons[0].ID)
	if got := strings.Count(page, `<article class="comment"`); got != 1 || !strings.Contains(page, "&lt;b&gt;on the first&lt;/b&gt;") || strings.Contains(page, "on the second") {
		t.Errorf("the first lesson's page lists %d comments:\n%s", got, page)
	}
	if !regexp.MustCompile(`<a class="nostr" href="nostr:nevent1[02-9ac-hj-np-z]+"`).MatchString(page) {
		t.Error("the lesson page has no nostr: link")
	}
}
