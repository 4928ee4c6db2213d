package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/events"
)

const commentUsage = `comment <lesson ref> (--content TEXT | --content-file F) [--reply-to <comment ref>]
    [--key NSEC] [--relay URL]... [--json]

Refs are nevent, note or hex ids. The lesson (and the comment replied to)
are fetched from the relay(s) to fill the NIP-22 tags E/K/P and e/k/p.`

// commentArgs is comment's parsed command line.
type commentArgs struct {
	w       writeFlags
	lesson  string // event id
	replyTo string // event id, or ""
	content string
}

// runComment: comment (see commentUsage).
func runComment(ctx context.Context, m *Main, args []string) error {
	a, err := m.parseCommentArgs(args)
	if err != nil {
		return err
	}
	sk, err := a.w.key.secret(m, "comment")
	if err != nil {
		return err
	}
	s, err := m.dial(ctx, &a.w.net)
	if err != nil {
		return fmt.Errorf("comment: %w", err)
	}
	defer s.Close()
	c, err := a.comment(ctx, s)
	if err != nil {
		return fmt.Errorf("comment: %w", err)
	}
	evt, err := sign("comment", c.Template(), sk)
	if err != nil {
		return err
	}
	return m.publish(ctx, "comment", s, evt, a.w.json)
}

func (m *Main) parseCommentArgs(args []string) (*commentArgs, error) {
	a := &commentArgs{}
	var replyTo string
	var content contentFlags
	fs := m.newFlagSet("comment", commentUsage)
	m.addWriteFlags(fs, &a.w)
	fs.StringVar(&replyTo, "reply-to", "", "the comment (on the same lesson) this replies to")
	addContentFlags(fs, &content, "the comment text")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return nil, err
	}
	if len(pos) != 1 {
		return nil, usagef("comment: want exactly one lesson reference, got %d", len(pos))
	}
	if a.lesson, err = eventIDArg(pos[0]); err != nil {
		return nil, usagef("comment: lesson: %v", err)
	}
	if replyTo != "" {
		if a.replyTo, err = eventIDArg(replyTo); err != nil {
			return nil, usagef("comment: --reply-to: %v", err)
		}
	}
	if a.content, err = content.read(m, "comment"); err != nil {
		return nil, err
	}
	if strings.TrimSpace(a.content) == "" {
		return nil, usagef("comment: --content (or --content-file) is required")
	}
	return a, nil
}

// eventIDArg parses a reference that must name an event by id.
func eventIDArg(s string) (string, error) {
	ref, err := events.ParseRef(s)
	if err != nil {
		return "", err
	}
	if ref.ID == "" {
		return "", fmt.Errorf("an naddr names an addressable event, not one event: want nevent, note or hex")
	}
	return ref.ID, nil
}

// comment fetches the lesson (and the parent comment) and builds the comment.
func (a *commentArgs) comment(ctx context.Context, s *session) (*events.Comment, error) {
	lesson, err := fetchKind(ctx, s, a.lesson, events.KindLesson, "lesson")
	if err != nil {
		return nil, err
	}
	c := &events.Comment{RootID: lesson.ID, RootAuthor: lesson.PubKey, RootKind: events.KindLesson, Content: a.content}
	if a.replyTo == "" {
		return c, nil
	}
	parentEvt, err := fetchKind(ctx, s, a.replyTo, events.KindComment, "comment")
	if err != nil {
		return nil, fmt.Errorf("--reply-to: %w", err)
	}
	parent, err := events.ParseComment(parentEvt)
	if err != nil {
		return nil, fmt.Errorf("--reply-to: %w", err)
	}
	if parent.RootID != lesson.ID {
		return nil, fmt.Errorf("--reply-to: comment %s is on %s, not on lesson %s", parent.ID, parent.RootID, lesson.ID)
	}
	c.ParentID, c.ParentAuthor, c.ParentKind = parent.ID, parent.PubKey, events.KindComment
	return c, nil
}

// fetchKind fetches event id and checks that it is of kind want.
func fetchKind(ctx context.Context, s *session, id string, want int, what string) (*nostr.Event, error) {
	evt, err := s.get(ctx, id)
	if err != nil {
		return nil, err
	}
	if evt == nil {
		return nil, fmt.Errorf("no %s with id %s on %s", what, id, strings.Join(s.urls, ", "))
	}
	if evt.Kind != want {
		return nil, fmt.Errorf("event %s is kind %d, not a %s (%d)", id, evt.Kind, what, want)
	}
	return evt, nil
}
