package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentnode/agentnode/events"
)

const lessonPublishUsage = `lesson publish --definition REF --title T [--category C] [--topic T]...
    (--content TEXT | --content-file F) [--key NSEC] [--relay URL]... [--json]

REF is the definition the agent runs: nevent, note, hex id, naddr or
npub:slug (its latest version). It must exist on the relay(s).
The lesson is signed by --key, normally the agent's own key.`

// runLessonPublish: lesson publish (see lessonPublishUsage).
func runLessonPublish(ctx context.Context, m *Main, args []string) error {
	const cmd = "lesson publish"
	var w writeFlags
	var l events.Lesson
	var defArg string
	var topics stringList
	var content contentFlags
	fs := m.newFlagSet(cmd, lessonPublishUsage)
	m.addWriteFlags(fs, &w)
	fs.StringVar(&defArg, "definition", "", "the definition (kind 4199) the lesson is about")
	fs.StringVar(&l.Title, "title", "", "short summary (required)")
	fs.StringVar(&l.Category, "category", "", "topic classification")
	fs.Var(&topics, "topic", "a topic (t tag), repeatable")
	addContentFlags(fs, &content, "the lesson")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("%s: unexpected argument %q", cmd, fs.Arg(0))
	}
	ref, err := lessonArgs(defArg, l.Title)
	if err != nil {
		return err
	}
	if l.Content, err = content.read(m, cmd); err != nil {
		return err
	}
	if strings.TrimSpace(l.Content) == "" {
		return usagef("%s: --content (or --content-file) is required", cmd)
	}
	l.Topics = topics
	return m.publishLesson(ctx, &w, ref, &l)
}

// lessonArgs checks the required flags and parses the definition reference.
func lessonArgs(defArg, title string) (defRef, error) {
	if defArg == "" {
		return defRef{}, usagef("lesson publish: --definition is required")
	}
	if title == "" {
		return defRef{}, usagef("lesson publish: --title is required")
	}
	ref, err := parseDefRef(defArg)
	if err != nil {
		return defRef{}, usagef("lesson publish: --definition: %v", err)
	}
	return ref, nil
}

// publishLesson resolves the definition, then signs and publishes l.
func (m *Main) publishLesson(ctx context.Context, w *writeFlags, ref defRef, l *events.Lesson) error {
	const cmd = "lesson publish"
	sk, err := w.key.secret(m, cmd)
	if err != nil {
		return err
	}
	s, err := m.dial(ctx, &w.net)
	if err != nil {
		return fmt.Errorf("%s: %w", cmd, err)
	}
	defer s.Close()
	if err := refusePublicKey(ctx, cmd, w.key, s, sk); err != nil {
		return err
	}
	def, err := ref.resolve(ctx, s)
	if err != nil {
		return fmt.Errorf("%s: --definition: %w", cmd, err)
	}
	l.DefinitionID = def.ID
	evt, err := sign(cmd, l.Template(), sk)
	if err != nil {
		return err
	}
	return m.publish(ctx, cmd, s, evt, w.json)
}
