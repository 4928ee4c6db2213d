package schema

import (
	"embed"
	"encoding/json"
)

// URIs of the core models every user gets (NIP-8 "Built-in Core Models").
const (
	ConversationLogURI = "did:nuwa:core:ConversationLog#v1"
	MemoryStoreURI     = "did:nuwa:core:MemoryStore#v1"
	AgentSettingsURI   = "did:nuwa:core:AgentSettings#v1"
)

//go:embed core/*.json
var coreFS embed.FS

// coreFiles maps each core model to its embedded schema, verbatim from the
// spec.
var coreFiles = map[string]string{
	ConversationLogURI: "core/ConversationLog.json",
	MemoryStoreURI:     "core/MemoryStore.json",
	AgentSettingsURI:   "core/AgentSettings.json",
}

// CoreURIs lists the core models in creation order.
var CoreURIs = []string{ConversationLogURI, MemoryStoreURI, AgentSettingsURI}

// CoreInitial returns the document each core model starts with: an empty
// log, an empty memory map, and settings in English.
func CoreInitial(uri string) json.RawMessage {
	switch uri {
	case ConversationLogURI:
		return json.RawMessage(`{"entries":[]}`)
	case MemoryStoreURI:
		return json.RawMessage(`{"items":{}}`)
	case AgentSettingsURI:
		return json.RawMessage(`{"language":"en"}`)
	}
	return nil
}

// Core returns the parsed core model schemas.
func Core() []*Schema {
	out := make([]*Schema, 0, len(CoreURIs))
	for _, uri := range CoreURIs {
		raw, err := coreFS.ReadFile(coreFiles[uri])
		if err != nil {
			panic(err)
		}
		out = append(out, MustParse(raw, ""))
	}
	return out
}
