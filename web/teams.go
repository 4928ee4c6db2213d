package web

import (
	"context"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/events"
)

// maxTeams bounds the teams (kind 34199) the index lists: the newest,
// read with a limit, so a page costs the same however many are stored.
const maxTeams = 20

// teamsOf reads the newest teams (malformed ones are skipped).
func (s *Site) teamsOf(ctx context.Context) []*events.Team {
	if s.cfg.Store == nil {
		return nil
	}
	evts, err := s.cfg.Store.QuerySync(ctx, nostr.Filter{Kinds: []int{events.KindTeam}, Limit: maxTeams})
	if err != nil {
		return nil
	}
	var teams []*events.Team
	for _, evt := range evts {
		if t, err := events.ParseTeam(evt); err == nil {
			teams = append(teams, t)
		}
	}
	return teams
}
