package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip19"

	"github.com/agentnode/agentnode/agentd"
	"github.com/agentnode/agentnode/events"
)

// Teams (TENEX kind 34199): a title and ordered member definitions, the
// first the default agent. `def list --teams` lists them; `agent install
// --team REF` installs every member for the owner.

// teamView is the JSON form of a team.
type teamView struct {
	ID      string   `json:"id"`
	Naddr   string   `json:"naddr"`
	Npub    string   `json:"npub"`
	Slug    string   `json:"slug"`
	Title   string   `json:"title"`
	Members []string `json:"members"` // definition ids, the default first
}

func viewTeam(t *events.Team) teamView {
	naddr, _ := nip19.EncodeEntity(t.PubKey, events.KindTeam, t.Slug, nil)
	v := teamView{ID: t.ID, Naddr: naddr, Npub: npub(t.PubKey), Slug: t.Slug, Title: t.Title, Members: []string{}}
	for _, m := range t.Members {
		v.Members = append(v.Members, m.ID)
	}
	return v
}

// listTeams is def list --teams: the teams on the relays, newest first.
func (m *Main) listTeams(ctx context.Context, s *session, authors []string, limit int, asJSON bool) error {
	evts, err := s.QuerySync(ctx, nostr.Filter{Kinds: []int{events.KindTeam}, Authors: authors, Limit: limit})
	if err != nil {
		return fmt.Errorf("def list: %w", err)
	}
	views := []teamView{}
	for _, evt := range evts {
		if t, err := events.ParseTeam(evt); err == nil && len(views) < limit {
			views = append(views, viewTeam(t))
		}
	}
	if asJSON {
		return writeJSON(m.Stdout, views)
	}
	t := newTable(m.Stdout)
	fmt.Fprintf(t, "TITLE\tMEMBERS\tDEFAULT\tNADDR\n")
	for _, v := range views {
		fmt.Fprintf(t, "%s\t%d\t%s\t%s\n", oneLine(v.Title, 30), len(v.Members), v.Members[0][:12], v.Naddr)
	}
	return t.Flush()
}

// resolveTeam fetches the team ref names: a kind-34199 naddr (its newest
// version), an nevent, note or hex id.
func resolveTeam(ctx context.Context, s *session, ref string) (*events.Team, error) {
	r, err := events.ParseRef(ref)
	if err != nil {
		return nil, fmt.Errorf("--team: %w", err)
	}
	f := nostr.Filter{IDs: []string{r.ID}, Limit: 1}
	if r.ID == "" {
		if r.Kind != events.KindTeam {
			return nil, fmt.Errorf("--team: an naddr of kind %d, want %d", r.Kind, events.KindTeam)
		}
		f = nostr.Filter{Kinds: []int{events.KindTeam}, Authors: []string{r.Author}, Tags: nostr.TagMap{"d": {r.Identifier}}, Limit: 1}
	}
	evts, err := s.QuerySync(ctx, f)
	if err != nil {
		return nil, err
	}
	if len(evts) == 0 {
		return nil, fmt.Errorf("no team %s on %s", ref, strings.Join(s.urls, ", "))
	}
	return events.ParseTeam(newestEvent(evts))
}

func newestEvent(evts []*nostr.Event) *nostr.Event {
	best := evts[0]
	for _, e := range evts[1:] {
		if e.CreatedAt > best.CreatedAt {
			best = e
		}
	}
	return best
}

// teamInstalled is the outcome of agent install --team.
type teamInstalled struct {
	Team    teamView           `json:"team"`
	Default string             `json:"default"` // the default agent's npub
	Agents  []agentd.Installed `json:"agents"`
}

// installTeam installs every member of the team for req.Owner, in
// order; it stops at the first member that fails, naming it (the
// members before it stay installed; running it again completes the team:
// installs are idempotent).
func (m *Main) installTeam(ctx context.Context, f *agentFlags, c *agentd.Client, ref string, req agentd.InstallRequest) error {
	const cmd = "agent install --team"
	s, err := m.dial(ctx, &netFlags{relays: []string{relayFor(f.node)}, timeout: f.timeout})
	if err != nil {
		return fmt.Errorf("%s: %w", cmd, err)
	}
	defer s.Close()
	team, err := resolveTeam(ctx, s, ref)
	if err != nil {
		return fmt.Errorf("%s: %w", cmd, err)
	}
	out := teamInstalled{Team: viewTeam(team), Agents: []agentd.Installed{}}
	for i, mem := range team.Members {
		req.Definition = mem.ID
		res, err := c.Install(ctx, req)
		if err != nil {
			return agentErr(fmt.Sprintf("%s: member %d (%s)", cmd, i+1, mem.ID), f, err)
		}
		out.Agents = append(out.Agents, res)
	}
	out.Default = out.Agents[0].Npub
	if f.json {
		return writeJSON(m.Stdout, out)
	}
	fmt.Fprintf(m.Stdout, "team %q: %d agents\n", team.Title, len(out.Agents))
	for i, res := range out.Agents {
		mark := ""
		if i == 0 {
			mark = "  (default)"
		}
		fmt.Fprintf(m.Stdout, "  %s  %s%s\n", res.Npub, res.Agent.Name, mark)
	}
	return nil
}

// runTeamInstall is agent install --team: no positional argument, an owner.
func (m *Main) runTeamInstall(ctx context.Context, f *agentFlags, pos []string, team string, req agentd.InstallRequest) error {
	if len(pos) > 0 {
		return usagef("agent install: give a definition or --team, not both")
	}
	if req.Owner == "" {
		return usagef("agent install: --owner is required")
	}
	if req.Name != "" {
		return usagef("agent install --team: --name does not apply (each member takes its definition's title)")
	}
	c, err := m.agentClient("agent install", f, true)
	if err != nil {
		return err
	}
	return m.installTeam(ctx, f, c, team, req)
}
