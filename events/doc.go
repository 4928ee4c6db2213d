// Package events is the pure domain of agentnode: the Nostr event kinds the
// node speaks (NIP-AE agent definitions, nudges, lessons, NIP-22 lesson
// comments, agent profiles, owner claims, NIP-09 deletions), as typed values
// with builders (Template), parsers (Parse*) and validators (Validate).
//
// It does no I/O: no files, sockets or databases. The relay calls Validate in
// its event policy and answers "invalid: " + err.Error() on refusal; the CLI
// and the daemon build events with Template, sign them, and read them back
// with the Parse functions (which validate too). docs/KINDS.md lists every
// kind, tag and refusal reason.
//
// Building and reading a lesson:
//
//	l := &events.Lesson{DefinitionID: defID, Title: "Prefer table tests", Category: "testing"}
//	evt := l.Template()
//	evt.CreatedAt = nostr.Now()
//	if err := evt.Sign(agentSecretKey); err != nil { ... }
//	if err := events.Validate(&evt); err != nil { ... } // *events.ValidationError
//	got, err := events.ParseLesson(&evt)
//
// Checking who owns an agent, from its kind 0 and its owner's kind 14199:
//
//	p, _ := events.ParseProfile(profileEvt)
//	c, _ := events.ParseOwnerClaims(claimsEvt)
//	o := events.CheckOwnership(agentPubKey, p, c) // o.Verified, o.Reason
//
// Errors wrap sentinels (ErrMissingTag, ErrBadID, ErrBadPubKey, ErrBadValue,
// ...), so callers test them with errors.Is.
package events
