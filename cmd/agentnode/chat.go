package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentnode/agentnode/agentd"
	"github.com/agentnode/agentnode/capabilities/llm"
)

// DefaultChatTimeout bounds one chat message: a model may call tools for a
// while before it answers.
const DefaultChatTimeout = 5 * time.Minute

const chatUsage = `chat <agent> [-m TEXT] [--conversation ID] [--node URL] [--data DIR] [--json]

Talks to an agent of the running node. With -m, sends one message, prints
the answer and exits. Otherwise reads messages from standard input, one per
line, and prints each answer, until end of input or /quit. /back and
/switch <capability> go to the agent's router: /switch note talks to the
note capability until /back. --conversation keeps a conversation across
runs (default: a new one per run).

The node needs an OpenAI-compatible model, configured in the environment of
` + "`agentnode serve`" + `: ` + llm.EnvBaseURL + `, ` + llm.EnvModel + ` and ` + llm.EnvAPIKey + `.`

// runChat: chat (see chatUsage).
func runChat(ctx context.Context, m *Main, args []string) error {
	const cmd = "chat"
	var f agentFlags
	fs := m.newFlagSet(cmd, chatUsage)
	m.addAgentFlags(fs, &f)
	f.timeout = DefaultChatTimeout // a model may take a while: a longer default than other agent commands
	fs.Lookup("timeout").DefValue = DefaultChatTimeout.String()
	msg := fs.String("m", "", "send this one message and exit")
	conv := fs.String("conversation", "", "the conversation id (default: a new one)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if err := wantArgs(cmd, pos, 1, "one agent"); err != nil {
		return err
	}
	c, err := m.agentClient(cmd, &f, true)
	if err != nil {
		return err
	}
	if *conv == "" {
		*conv = newConversationID()
	}
	s := &chatSession{m: m, c: c, f: &f, agent: pos[0], conv: *conv}
	if *msg != "" {
		return s.send(ctx, *msg)
	}
	return s.loop(ctx)
}

// chatSession is one run of `agentnode chat`.
type chatSession struct {
	m     *Main
	c     *agentd.Client
	f     *agentFlags
	agent string
	conv  string
}

// loop sends every line of standard input until EOF or /quit.
func (s *chatSession) loop(ctx context.Context) error {
	sc := bufio.NewScanner(s.m.Stdin)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "":
			continue
		case line == "/quit" || line == "/exit":
			return nil
		}
		if err := s.send(ctx, line); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("chat: read input: %w", err)
	}
	return nil
}

// send sends one message and prints the answer.
func (s *chatSession) send(ctx context.Context, text string) error {
	reply, err := s.c.Chat(ctx, s.agent, s.conv, text)
	if errors.Is(err, llm.ErrNoModel) {
		return fmt.Errorf("chat: the node has no model configured: start `agentnode serve` with %s (e.g. http://127.0.0.1:11434/v1), %s and, if the provider needs one, %s",
			llm.EnvBaseURL, llm.EnvModel, llm.EnvAPIKey)
	}
	if err != nil {
		return agentErr("chat", s.f, err)
	}
	if s.f.json {
		return writeJSON(s.m.Stdout, reply)
	}
	for _, tc := range reply.ToolCalls {
		status := "ok"
		if tc.ErrorCode != "" {
			status = tc.ErrorCode
		}
		fmt.Fprintf(s.m.Stderr, "  [tool %s: %s]\n", tc.Name, status)
	}
	prefix := ""
	if reply.Capability != "" {
		prefix = "[" + capName(reply.Capability) + "] "
	}
	fmt.Fprintln(s.m.Stdout, prefix+reply.Answer)
	return nil
}

// capName is the <name> of did:nuwa:cap:<name>@<version>.
func capName(id string) string {
	name := strings.TrimPrefix(id, "did:nuwa:cap:")
	if i := strings.IndexByte(name, '@'); i >= 0 {
		name = name[:i]
	}
	return name
}

// newConversationID is a random conversation id for one chat run.
func newConversationID() string {
	b := make([]byte, 8)
	rand.Read(b)
	return "cli-" + hex.EncodeToString(b)
}
