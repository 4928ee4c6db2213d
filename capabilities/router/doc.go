// Package router picks, for each user message, which installed capability
// (or the agent's own prompt) handles it. Each conversation has a stack of
// capabilities:
//
//   - "/back" pops the stack (the rest of the message, if any, routes on);
//   - "/switch <cap>" (by name, name@version, full id or display name, of
//     one or more words) pushes a capability;
//   - else the capability on top of the stack keeps the conversation, unless
//     another capability's triggers match the message more often: then the
//     top pops and that one is pushed (re-classification);
//   - else the triggers of installed capabilities are tried in install
//     order (each package's regex and keyword triggers in the order it
//     lists them); the first match is pushed;
//   - else the agent's own prompt answers (Capability "").
//
// A tool result with {"done": true} ends the capability: the caller calls
// Done. Options.IdleTimeout pops one entry per period of silence, and
// Options.Models are matched against each capability's llm_requirements
// (ChooseModel): Decision.Model is the choice, and a capability no model
// fits is refused (ReasonNoModel). docs/ROUTER.md has the full rules.
//
// A use:
//
//	r := router.NewWith([]router.Route{{ID: "did:nuwa:cap:note@1.0.0", Name: "note",
//		Triggers: []acp.Trigger{{Type: "keyword", Value: "note"}}}}, router.Options{})
//	d := r.Route(convID, "add a note: buy milk")
//	if d.Reply != "" { return d.Reply } // a command answered without a model
//	// run the model with d.Capability's prompt (or the agent's own) on d.Message
package router
