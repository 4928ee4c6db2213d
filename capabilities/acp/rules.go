package acp

import "regexp"

// builtinPermission maps each built-in tool to the permission it needs in
// metadata.permissions.require ("" = none).
var builtinPermission = map[string]string{
	"state.create":  PermStateCreate,
	"state.update":  PermStateUpdate,
	"state.query":   PermStateQuery,
	"state.get":     PermStateQuery,
	"state.delete":  PermStateDelete,
	"state.history": PermStateQuery,
	"lesson.learn":  "",
}

// Permissions a package may require.
const (
	PermStateCreate  = "state.create"
	PermStateUpdate  = "state.update"
	PermStateQuery   = "state.query" // also covers state.get and state.history
	PermStateDelete  = "state.delete"
	PermStorageLarge = "storage.large" // objects over 32 MiB (NIP-8)
)

// knownPermissions are the strings permissions.require may hold.
var knownPermissions = []string{PermStateCreate, PermStateUpdate, PermStateQuery, PermStateDelete, PermStorageLarge}

// crdtNames are the x-crdt (and x-asm.crdt) names the runtime knows: the
// registry of agentd/state/crdt, copied here because capabilities must not
// import agentd (a test keeps them equal).
var crdtNames = []string{
	"append_only", "counter", "flag", "grow_only_set", "log_rga", "lww_register",
	"mv_register", "or_map", "rga_list", "rga_text",
}

var (
	toolNameRE  = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)
	scopeRE     = regexp.MustCompile(`^sc:[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
	schemaURIRE = regexp.MustCompile(`^did:nuwa:[A-Za-z0-9._:@-]+#[A-Za-z0-9._-]+$`)
	hex64RE     = regexp.MustCompile(`^[0-9a-f]{64}$`)
	hex128RE    = regexp.MustCompile(`^[0-9a-f]{128}$`)
)

// Draft202012 is the only $schema a package schema may name.
const Draft202012 = "https://json-schema.org/draft/2020-12/schema"
