package agentrpc

import (
	"errors"
	"strings"
	"sync"

	"github.com/agentnode/agentnode/agentd/directory"
	"github.com/agentnode/agentnode/events"
)

// aliases maps the free-form ids agents registered with a signed proof
// (agent/register {agent: {id: "agent-id-1"}, proof}) to their keys: the
// id names the proven agent as a target, in heartbeats and unregister. At
// most directory.MaxClaims are kept; they live as long as the process (an
// agent registers again when it starts, as the spec's lifecycle has it).
type aliases struct {
	mu sync.Mutex
	m  map[string]string // free-form id -> hex key
}

// Errors of free-form ids.
var (
	// errTooManyAliases: directory.MaxClaims free-form ids are taken.
	errTooManyAliases = errors.New("too many free-form agent ids")
	// errNoAlias: a well-formed free-form id no proven agent registered.
	errNoAlias = errors.New("no agent registered with this id")
)

// set names key by id, replacing an earlier key of the same id (the newer
// proof wins, as a newer heartbeat does).
func (a *aliases) set(id, key string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.m == nil {
		a.m = map[string]string{}
	}
	if _, ok := a.m[id]; !ok && len(a.m) >= directory.MaxClaims {
		return errTooManyAliases
	}
	a.m[id] = key
	return nil
}

// get returns the key id names.
func (a *aliases) get(id string) (string, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	k, ok := a.m[id]
	return k, ok
}

// drop forgets every free-form id of key.
func (a *aliases) drop(key string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for id, k := range a.m {
		if k == key {
			delete(a.m, id)
		}
	}
}

// keyOf reads an agent id named field: 64 hex, npub, or a free-form id a
// proven agent registered. Another free-form id is -32001 when it breaks
// the id rule (directory.CheckClaimID), else errNoAlias.
func (s *Service) keyOf(field, raw string) (string, error) {
	if raw == "" {
		return "", invalidPayload("%s is required", field)
	}
	if id, err := events.ParsePubKey(raw); err == nil {
		return id, nil
	}
	if key, ok := s.aliases.get(raw); ok {
		return key, nil
	}
	if err := directory.CheckClaimID(raw); err != nil {
		return "", invalidPayload("%s is not an agent id (64 hex, npub, or a registered id of letters, digits and %s)", field, "._~:@/+#-")
	}
	return "", errNoAlias
}

// freeID checks a free-form agent.id given with a proof.
func freeID(id string) error {
	if err := directory.CheckClaimID(id); err != nil {
		return invalidPayload("agent.id: %s", shortClaimError(err))
	}
	return nil
}

// shortClaimError is a directory claim error without its prefixes.
func shortClaimError(err error) string {
	if _, after, ok := strings.Cut(err.Error(), directory.ErrBadClaim.Error()+": "); ok {
		return after
	}
	return err.Error()
}

// proven reads a proven agent's id named field (keyOf): a well-formed id
// nobody registered with a proof is -32002.
func (s *Service) proven(field, raw string) (string, error) {
	id, err := s.keyOf(field, raw)
	if errors.Is(err, errNoAlias) {
		return "", agentNotFound(raw)
	}
	return id, err
}
