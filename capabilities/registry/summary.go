package registry

import (
	"fmt"

	"github.com/agentnode/agentnode/capabilities/acp"
	"github.com/agentnode/agentnode/events"
	"github.com/nbd-wtf/go-nostr"
	"gopkg.in/yaml.v3"
)

// summaryDoc is what the index reads from a package file: its metadata
// and tool names. The full parse (acp.FromEvent: schema compilation,
// every rule) costs ~10x more and is left to Resolve.
type summaryDoc struct {
	Metadata struct {
		ID          string `yaml:"id"`
		Name        string `yaml:"name"`
		Description string `yaml:"description"`
		Triggers    []struct {
			Type  string `yaml:"type"`
			Value string `yaml:"value"`
		} `yaml:"triggers"`
		MemoryScope string `yaml:"memory_scope"`
		Signature   struct {
			PubKey string `yaml:"pubkey"`
			Sig    string `yaml:"sig"`
		} `yaml:"signature"`
		Permissions struct {
			Require []string `yaml:"require"`
		} `yaml:"permissions"`
		LLM yaml.Node `yaml:"llm_requirements"` // read leniently (llmOf)
	} `yaml:"metadata"`
	Tools []struct {
		Function struct {
			Name string `yaml:"name"`
		} `yaml:"function"`
	} `yaml:"tools"`
}

// summarize checks what the index relies on — the event's id and
// signature, its tags against its content (events.ParseCapability: d,
// name, version, x = sha256), the file's metadata.signature (present and
// naming the event's author: Nuwa NIP-7 rejects unsigned packages) and
// metadata.id against the tags — and reads the package's metadata and
// tool names. A package that fails is never listed, resolved or installed.
func summarize(evt *nostr.Event) (*events.Capability, acp.Metadata, []string, error) {
	c, err := events.ParseCapability(evt)
	if err != nil {
		return nil, acp.Metadata{}, nil, err
	}
	if ok, _ := evt.CheckSignature(); !ok || evt.GetID() != evt.ID {
		return nil, acp.Metadata{}, nil, fmt.Errorf("event %s: bad id or signature", evt.ID)
	}
	var doc summaryDoc
	if err := yaml.Unmarshal([]byte(evt.Content), &doc); err != nil {
		return nil, acp.Metadata{}, nil, fmt.Errorf("event %s: package yaml: %w", evt.ID, err)
	}
	if err := fileSignedByAuthor(evt, &doc); err != nil {
		return nil, acp.Metadata{}, nil, err
	}
	if doc.Metadata.ID != acp.CapURI(c.Name, c.Version) {
		return nil, acp.Metadata{}, nil, fmt.Errorf("event %s: metadata.id %q is not the tags' %s", evt.ID, doc.Metadata.ID, c.D())
	}
	return c, metadataOf(&doc), toolNames(&doc), nil
}

// fileSignedByAuthor: the file carries metadata.signature {pubkey, sig}
// (doc, decoded from it) and pubkey is the event's author. The signature
// itself is verified by Resolve (acp.FromEvent), on the package it
// chooses: here the event's own signature already binds the content to
// its author, and a BIP-340 check per package would make Load half again
// as slow. (A DID-key string signature names no Nostr key: it is never the
// event author's, as acp.FromEvent also finds.)
func fileSignedByAuthor(evt *nostr.Event, doc *summaryDoc) error {
	sig := doc.Metadata.Signature
	switch {
	case sig.PubKey == "" && sig.Sig == "":
		return fmt.Errorf("event %s: %w", evt.ID, acp.ErrUnsigned)
	case sig.PubKey != evt.PubKey:
		return fmt.Errorf("event %s: the file is signed by %q, not by the event's author", evt.ID, sig.PubKey)
	case len(sig.Sig) != 128:
		return fmt.Errorf("event %s: %w: metadata.signature.sig is not 128 hex", evt.ID, acp.ErrBadSignature)
	}
	return nil
}

func metadataOf(doc *summaryDoc) acp.Metadata {
	m := acp.Metadata{ID: doc.Metadata.ID, Name: doc.Metadata.Name, Description: doc.Metadata.Description,
		MemoryScope: doc.Metadata.MemoryScope, Permissions: acp.Permissions{Require: doc.Metadata.Permissions.Require}}
	for _, t := range doc.Metadata.Triggers {
		m.Triggers = append(m.Triggers, acp.Trigger{Type: t.Type, Value: t.Value})
	}
	m.LLM = llmOf(&doc.Metadata.LLM)
	if sig := doc.Metadata.Signature; sig.PubKey != "" || sig.Sig != "" {
		m.Signature = &acp.Signature{PubKey: sig.PubKey, Sig: sig.Sig}
	}
	return m
}

// llmOf reads llm_requirements' four fields; a section that is absent or
// does not decode is nil (the full parse, at Resolve, says why).
func llmOf(n *yaml.Node) *acp.LLMRequires {
	if n.Kind != yaml.MappingNode {
		return nil
	}
	var l struct {
		ModelFamily      []string `yaml:"model_family"`
		SpecificModelURI string   `yaml:"specific_model_uri"`
		MinContextWindow int      `yaml:"min_context_window"`
		RequiredFeatures []string `yaml:"required_features"`
	}
	if err := n.Decode(&l); err != nil {
		return nil
	}
	return &acp.LLMRequires{ModelFamily: l.ModelFamily, SpecificModelURI: l.SpecificModelURI,
		MinContextWindow: l.MinContextWindow, RequiredFeatures: l.RequiredFeatures}
}

func toolNames(doc *summaryDoc) []string {
	names := make([]string, 0, len(doc.Tools))
	for _, t := range doc.Tools {
		names = append(names, t.Function.Name)
	}
	return names
}
