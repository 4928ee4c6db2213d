package lessons_test

import (
	"context"
	"testing"

	"github.com/agentnode/agentnode/lessons"
)

func TestKey_orderIndependent(t *testing.T) {
	s := newScene(t)
	s.lesson(s.agent, "a", "1")
	s.lesson(s.owner, "b", "2")
	ev, err := lessons.Gather(context.Background(), s.r, s.subject())
	if err != nil {
		t.Fatal(err)
	}
	k1 := lessons.Key(s.subject(), ev, lessons.DefaultPolicy())
	ev.Lessons[0], ev.Lessons[1] = ev.Lessons[1], ev.Lessons[0]
	if k2 := lessons.Key(s.subject(), ev, lessons.DefaultPolicy()); k1 != k2 {
		t.Errorf("key depends on arrival order")
	}
	ev.Lessons = ev.Lessons[:1]
	if k3 := lessons.Key(s.subject(), ev, lessons.DefaultPolicy()); k3 == k1 {
		t.Errorf("key ignores a lesson")
	}
}
