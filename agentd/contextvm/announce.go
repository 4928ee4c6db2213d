package contextvm

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/nbd-wtf/go-nostr"
)

// AnnouncementKinds are the CEP-6 kinds a server announces itself with
// (replaceable: one of each per server key).
var AnnouncementKinds = []int{KindServerAnnouncement, KindToolsList, KindResourcesList, KindResourceTemplates, KindPromptsList}

// KindRelayList is the NIP-65 relay list ContextVM clients read to find
// where a server listens (the SDK's discovery).
const KindRelayList = 10002

// ServerInfo is what a server announcement says about the server besides
// its MCP initialize result.
type ServerInfo struct {
	Name, About, Website, Picture string
	Encryption                    Encryption
}

// tags are the announcement's info and capability tags.
func (i ServerInfo) tags() nostr.Tags {
	var tags nostr.Tags
	for _, kv := range [][2]string{{"name", i.Name}, {"about", i.About}, {"website", i.Website}, {"picture", i.Picture}} {
		if kv[1] != "" {
			tags = append(tags, nostr.Tag{kv[0], kv[1]})
		}
	}
	if i.Encryption != EncryptionDisabled {
		tags = append(tags, nostr.Tag{TagSupportEncryption}, nostr.Tag{TagSupportEncryptionEphemeral})
	}
	return tags
}

// Announcements builds a server's CEP-6 announcements, signed with sk:
// 11316 with the initialize result, 11317 with tools/list, and 11318,
// 11319, 11320 with resources, resource templates and prompts when the
// server has them; then the NIP-65 relay list (10002) naming relays. The
// lists come from srv itself, through an in-memory MCP session, so they
// are what a client would be told.
func Announcements(ctx context.Context, srv *mcp.Server, sk string, info ServerInfo, relays []string) ([]*nostr.Event, error) {
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		return nil, fmt.Errorf("contextvm: announce: %w", err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "agentnode-announcer", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		return nil, fmt.Errorf("contextvm: announce: %w", err)
	}
	defer cs.Close()
	results, err := listings(ctx, cs)
	if err != nil {
		return nil, err
	}
	var out []*nostr.Event
	for _, r := range results {
		tags := nostr.Tags{}
		if r.kind == KindServerAnnouncement {
			tags = info.tags()
		}
		evt, err := signed(r.kind, r.v, tags, sk)
		if err != nil {
			return nil, err
		}
		out = append(out, evt)
	}
	rl := nostr.Tags{}
	for _, u := range relays {
		rl = append(rl, nostr.Tag{"r", u})
	}
	evt := &nostr.Event{Kind: KindRelayList, CreatedAt: nostr.Now(), Tags: rl}
	if err := evt.Sign(sk); err != nil {
		return nil, err
	}
	return append(out, evt), nil
}

type listing struct {
	kind int
	v    any
}

// listings asks cs for what the server announces.
func listings(ctx context.Context, cs *mcp.ClientSession) ([]listing, error) {
	init := cs.InitializeResult()
	out := []listing{{KindServerAnnouncement, init}}
	caps := init.Capabilities
	if caps.Tools != nil {
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			return nil, fmt.Errorf("contextvm: announce: tools/list: %w", err)
		}
		out = append(out, listing{KindToolsList, res})
	}
	if caps.Resources != nil {
		res, err := cs.ListResources(ctx, nil)
		if err != nil {
			return nil, fmt.Errorf("contextvm: announce: resources/list: %w", err)
		}
		tpl, err := cs.ListResourceTemplates(ctx, nil)
		if err != nil {
			return nil, fmt.Errorf("contextvm: announce: resources/templates/list: %w", err)
		}
		out = append(out, listing{KindResourcesList, res}, listing{KindResourceTemplates, tpl})
	}
	if caps.Prompts != nil {
		res, err := cs.ListPrompts(ctx, nil)
		if err != nil {
			return nil, fmt.Errorf("contextvm: announce: prompts/list: %w", err)
		}
		out = append(out, listing{KindPromptsList, res})
	}
	return out, nil
}

// signed builds and signs an announcement of kind carrying v as JSON.
func signed(kind int, v any, tags nostr.Tags, sk string) (*nostr.Event, error) {
	content, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("contextvm: announce: %w", err)
	}
	evt := &nostr.Event{Kind: kind, CreatedAt: nostr.Now(), Tags: tags, Content: string(content)}
	if err := evt.Sign(sk); err != nil {
		return nil, fmt.Errorf("contextvm: announce: sign: %w", err)
	}
	return evt, nil
}

// Retraction is the NIP-09 deletion of a server's announcements (the ones
// it published, by id, as the stock SDK deletes them), signed with sk.
// nil when there is nothing to delete.
func Retraction(stored []*nostr.Event, sk string, reason string) (*nostr.Event, error) {
	var tags nostr.Tags
	for _, e := range stored {
		tags = append(tags, nostr.Tag{"e", e.ID}, nostr.Tag{"k", fmt.Sprint(e.Kind)})
	}
	if len(tags) == 0 {
		return nil, nil
	}
	evt := &nostr.Event{Kind: nostr.KindDeletion, CreatedAt: nostr.Now(), Tags: tags, Content: reason}
	if err := evt.Sign(sk); err != nil {
		return nil, err
	}
	return evt, nil
}
