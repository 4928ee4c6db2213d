package events

// Event kinds this package builds, parses or validates.
const (
	KindProfile     = 0     // NIP-01 metadata; an agent profile when it carries ["bot"]
	KindDeletion    = 5     // NIP-09 deletion request
	KindComment     = 1111  // NIP-22 comment (here: on a lesson)
	KindLesson      = 4129  // NIP-AE lesson
	KindDefinition  = 4199  // NIP-AE agent definition
	KindNudge       = 4201  // NIP-AE nudge
	KindOwnerClaims = 14199 // NIP-AE owner claims (replaceable)
)

// Markers of a definition's ["e", id, relay, marker] tags.
const (
	MarkerFile = "file"
	MarkerFork = "fork"
)
