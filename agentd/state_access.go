package agentd

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/agentnode/agentnode/agentd/requester"
	"github.com/agentnode/agentnode/agentd/state"
	"github.com/agentnode/agentnode/agentd/state/schema"
)

// Access values of SetStateAccess: what the owner opens (or closes) of a
// schema to requesters (see state.Grant).
const (
	AccessRead  = "read"
	AccessWrite = "write"
)

// asRequester is who a state.* call runs as: the agent (for its owner)
// when ctx carries no requester or the requester is the agent or its
// owner; anyone else — a stranger over kind 25910, a DM correspondent, a
// sibling agent — is a requester with what the owner opened (the agent
// record's StateOpen). This is the one place a transport's caller becomes
// state rights (docs/ASM.md §6).
func asRequester(ctx context.Context, a Agent, c state.Caller) state.Caller {
	rq := requester.From(ctx)
	if rq == "" || rq == a.PubKey || rq == a.Owner {
		return c
	}
	c.Requester, c.Open = rq, slices.Clone(a.StateOpen)
	return c
}

// StateAccessRequest is the body of PUT /api/agents/{agent}/state-access.
type StateAccessRequest struct {
	Schema string `json:"schema"` // a schema URI
	Access string `json:"access"` // AccessRead or AccessWrite
	Open   bool   `json:"open"`   // false closes it
}

// SetStateAccess opens (or closes) a schema of the agent's state to
// requesters, for reading or writing, in the agent record (Agent.StateOpen,
// shown by agent show). Opening needs a schema the agent has: a core
// model's or one an installed capability declares. Errors: ErrBadRequest,
// ErrUnknownAgent.
func (d *Daemon) SetStateAccess(ctx context.Context, agent string, req StateAccessRequest) (Agent, error) {
	req.Schema = strings.TrimSpace(req.Schema)
	if req.Access != AccessRead && req.Access != AccessWrite {
		return Agent{}, fmt.Errorf("%w: access %q: want %q or %q", ErrBadRequest, req.Access, AccessRead, AccessWrite)
	}
	a, err := d.Lookup(agent)
	if err != nil {
		return Agent{}, err
	}
	if req.Open && !d.hasSchema(ctx, a, req.Schema) {
		return Agent{}, fmt.Errorf("%w: schema %q: not a core model nor declared by a capability installed on %s", ErrBadRequest, req.Schema, a.Name)
	}
	if err := d.begin(); err != nil {
		return Agent{}, err
	}
	defer d.mu.Unlock()
	if a, err = d.lookup(a.PubKey); err != nil {
		return Agent{}, err
	}
	a.StateOpen = withGrant(a.StateOpen, req)
	if err := d.reg.put(ctx, a); err != nil {
		return Agent{}, err
	}
	return a, nil
}

// hasSchema reports whether uri is a core model or the schema of one of
// the agent's installed capabilities.
func (d *Daemon) hasSchema(ctx context.Context, a Agent, uri string) bool {
	if slices.Contains(schema.CoreURIs, uri) {
		return true
	}
	caps, err := d.caps.load(ctx, a.PubKey)
	if err != nil {
		return false
	}
	for _, ic := range caps {
		if p, err := d.pkg(ctx, a.PubKey, ic); err == nil && p.SchemaURI() == uri {
			return true
		}
	}
	return false
}

// withGrant is grants with req applied: sorted by schema, without grants
// that open nothing.
func withGrant(grants []state.Grant, req StateAccessRequest) []state.Grant {
	out := slices.Clone(grants)
	i := slices.IndexFunc(out, func(g state.Grant) bool { return g.Schema == req.Schema })
	if i < 0 {
		out = append(out, state.Grant{Schema: req.Schema})
		i = len(out) - 1
	}
	if req.Access == AccessRead {
		out[i].Read = req.Open
	} else {
		out[i].Write = req.Open
	}
	out = slices.DeleteFunc(out, func(g state.Grant) bool { return !g.Read && !g.Write })
	slices.SortFunc(out, func(a, b state.Grant) int { return strings.Compare(a.Schema, b.Schema) })
	return out
}

func (d *Daemon) handleStateAccess(w http.ResponseWriter, r *http.Request) {
	var req StateAccessRequest
	if !d.decode(w, r, &req) {
		return
	}
	a, err := d.SetStateAccess(r.Context(), r.PathValue("agent"), req)
	d.reply(w, r, http.StatusOK, a, err)
}

// SetStateAccess opens or closes a schema of the agent's state to
// requesters (see Daemon.SetStateAccess).
func (c *Client) SetStateAccess(ctx context.Context, agent string, req StateAccessRequest) (Agent, error) {
	var out Agent
	return out, c.do(ctx, http.MethodPut, agentPath(agent, "/state-access"), req, &out)
}
