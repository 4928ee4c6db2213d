// Package acp reads, checks, signs and verifies Agent Capability Packages
// (.acp.yaml files, Nuwa NIP-7), and maps them to and from kind-30199
// events.
//
// Parse checks every rule of docs/ACP.md (the capability URI, the JSON
// Schema 2020-12 schema and its x-crdt names, OpenAI tool definitions,
// bindings, permissions, triggers, memory scope) and returns all problems
// at once in a *ParseError, each with its YAML line and field path. Sign
// writes metadata.signature (BIP-340 over sha256 of the file with the sig
// value blanked) by editing the text, so the rest of the file stays byte
// for byte; Verify checks it. EventTemplate and FromEvent map a package to
// and from its kind-30199 event.
//
// # Use
//
//	signed, err := acp.SignAs(raw, secretKeyHex, acp.SigFormNostr) // or an nsec
//	pubkey, err := acp.Verify(signed)              // acp.ErrUnsigned, acp.ErrBadSignature
//	p, err := acp.Parse(signed, acp.Options{CheckSchema: xasmCheck})
//	var perr *acp.ParseError
//	if errors.As(err, &perr) {
//		for _, pr := range perr.Problems { fmt.Println(pr) } // line 3: metadata.id: ...
//	}
//	params, _ := p.ToolParameters("state.create") // {$ref: "#/schema"} inlined
//	evt := acp.EventTemplate(p)                    // kind 30199, content = signed bytes
//	evt.CreatedAt = nostr.Now(); _ = evt.Sign(sk)
//	back, err := acp.FromEvent(&evt, acp.Options{})
package acp
