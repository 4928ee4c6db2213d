package schema_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/agentnode/agentnode/agentd/state/schema"
)

const noteSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "$id": "did:nuwa:state:note#v1",
  "type": "object",
  "properties": {
    "id": {"type": "string", "format": "uuid"},
    "title": {"type": "string", "x-crdt": "lww_register"},
    "body": {"type": "string", "x-crdt": "rga_text"},
    "source_url": {"type": "string", "format": "uri"},
    "tags": {"type": "array", "items": {"type": "string"}, "x-crdt": "grow_only_set"},
    "createdAt": {"type": "string", "format": "date-time"},
    "updatedAt": {"type": "string", "format": "date-time"}
  },
  "required": ["id", "title", "body", "createdAt", "updatedAt"]
}`

func TestParse_Note(t *testing.T) {
	s, err := schema.Parse([]byte(noteSchema), "did:nuwa:cap:note@1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.Namespace, (schema.Namespace{Kind: "cap", Name: "note"}); got != want {
		t.Errorf("namespace = %v, want %v", got, want)
	}
	docs, ops, _ := s.Namespace.Tables()
	if docs != "cap_note_docs" || ops != "cap_note_ops" {
		t.Errorf("tables = %s, %s", docs, ops)
	}
	if s.Container != "object" || s.Visibility != "private" || s.Fields["body"] != "rga_text" || s.Fields["tags"] != "grow_only_set" {
		t.Errorf("parsed = %+v", s)
	}
	if !strings.HasPrefix(s.CompileID, "urn:agentnode:schema:") {
		t.Errorf("compile id = %q", s.CompileID)
	}
	var idx []string
	for _, ix := range s.Indexes {
		idx = append(idx, ix.Expr())
	}
	if got := strings.Join(idx, ","); strings.Contains(got, "body") || !strings.Contains(got, "json_extract(doc, '$.title')") {
		t.Errorf("indexes = %s", got)
	}
}

func TestParse_Validate(t *testing.T) {
	s := schema.MustParse([]byte(noteSchema), "note")
	ok := `{"id":"5b0a3c52-8d7e-4c1e-9f59-1f7e0d1c2b3a","title":"t","body":"b","createdAt":"2025-01-01T00:00:00Z","updatedAt":"2025-01-01T00:00:00Z"}`
	if err := s.ValidateJSON([]byte(ok)); err != nil {
		t.Fatal(err)
	}
	bad := `{"id":"not-a-uuid","title":1,"body":"b","createdAt":"x","updatedAt":"2025-01-01T00:00:00Z"}`
	err := s.ValidateJSON([]byte(bad))
	if !errors.Is(err, schema.ErrInvalidDocument) || !strings.Contains(err.Error(), "/title") {
		t.Fatalf("err = %v", err)
	}
}

func TestCore(t *testing.T) {
	reg := schema.NewRegistry()
	for _, uri := range schema.CoreURIs {
		s, ok := reg.Lookup(uri)
		if !ok {
			t.Fatalf("%s missing", uri)
		}
		if s.Namespace.Prefix() != "core" || s.Visibility != "private" {
			t.Errorf("%s: %v %s", uri, s.Namespace, s.Visibility)
		}
		if err := s.ValidateJSON(schema.CoreInitial(uri)); err != nil {
			t.Errorf("%s initial: %v", uri, err)
		}
	}
	cl, _ := reg.Lookup(schema.ConversationLogURI)
	if cl.Container != "log" || cl.CRDT != "log_rga" || cl.Collection != "entries" || cl.TTL.String() != "P14D" || cl.Compression != "br" {
		t.Errorf("ConversationLog = %+v", cl)
	}
	ms, _ := reg.Lookup(schema.MemoryStoreURI)
	if ms.Container != "map" || ms.Collection != "items" || ms.Fields["items"] != "or_map" || ms.Retention == nil || ms.Retention.Strategy != schema.EvictLowImportance {
		t.Errorf("MemoryStore = %+v", ms)
	}
}

func TestParse_Errors(t *testing.T) {
	cases := map[string]struct{ doc, cap, want string }{
		"unknown crdt": {`{"$id":"did:nuwa:state:n#v1","properties":{"a":{"x-crdt":"lww_registr"}}}`, "n", "unknown crdt"},
		"crdt type":    {`{"$id":"did:nuwa:state:n#v1","properties":{"a":{"type":"number","x-crdt":"rga_text"}}}`, "n", "needs type"},
		"nested crdt":  {`{"$id":"did:nuwa:state:n#v1","properties":{"a":{"type":"object","properties":{"b":{"x-crdt":"counter"}}}}}`, "n", "top-level"},
		"bad ttl":      {`{"$id":"did:nuwa:state:n#v1","x-asm":{"x-ttl":"P1X"}}`, "n", "ISO-8601"},
		"bad strategy": {`{"$id":"did:nuwa:state:n#v1","x-asm":{"x-retention":{"window":"P1D","strategy":"random"}}}`, "n", "strategy"},
		"compression":  {`{"$id":"did:nuwa:state:n#v1","x-asm":{"x-compression":"lz4"}}`, "n", "x-compression"},
		"visibility":   {`{"$id":"did:nuwa:state:n#v1","x-asm":{"x-visibility":"secret"}}`, "n", "x-visibility"},
		"container":    {`{"$id":"did:nuwa:state:n#v1","x-asm":{"container":"tree"}}`, "n", "container"},
		"misfit crdt":  {`{"$id":"did:nuwa:state:n#v1","x-asm":{"container":"log","crdt":"rga_text"},"properties":{"e":{"type":"array"}}}`, "n", "does not fit"},
		"log no array": {`{"$id":"did:nuwa:state:n#v1","x-asm":{"container":"log"}}`, "n", "array property"},
		"unknown key":  {`{"$id":"did:nuwa:state:n#v1","x-asm":{"contaner":"log"}}`, "n", "unknown key"},
		"no cap":       {`{"$id":"did:nuwa:state:n#v1"}`, "", "declaring capability"},
		"other cap":    {`{"$id":"did:nuwa:cap:b:state:N#v1"}`, "a", "may not declare"},
		"no version":   {`{"$id":"did:nuwa:state:n"}`, "n", "#<version>"},
		"root array":   {`{"$id":"did:nuwa:state:n#v1","type":"array"}`, "n", "root"},
		"ext ref":      {`{"$id":"did:nuwa:state:n#v1","properties":{"a":{"$ref":"file:///etc/passwd"}}}`, "n", "refused"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := schema.Parse([]byte(tc.doc), tc.cap)
			if !errors.Is(err, schema.ErrInvalidSchema) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestParseURI(t *testing.T) {
	cases := map[string]schema.Namespace{
		"did:nuwa:core:MemoryStore#v1":            {Kind: "core"},
		"did:nuwa:cap:note@1.0.0:state:Note#v2":   {Kind: "cap", Name: "note"},
		"did:nuwa:app:calendar:state:Event#v1":    {Kind: "app", Name: "calendar"},
		"did:nuwa:user:z6MkhaXg:state:Scratch#v1": {Kind: "user", Name: "z6MkhaXg"},
		"did:nuwa:state:note#v1":                  {Kind: "cap"},
	}
	for uri, want := range cases {
		info, err := schema.ParseURI(uri)
		if err != nil || info.Namespace != want {
			t.Errorf("%s: %v %v, want %v", uri, info.Namespace, err, want)
		}
	}
	for _, bad := range []string{"did:nuwa:core:A:B#v1", "did:nuwa:cap:x#v1", "did:web:x#v1", "did:nuwa:core:A#", "did:nuwa:cap:a b:state:N#v1"} {
		if _, err := schema.ParseURI(bad); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

func TestNamespace_Prefix(t *testing.T) {
	cases := map[schema.Namespace]string{
		{Kind: "core"}:              "core",
		{Kind: "cap", Name: "note"}: "cap_note",
		{Kind: "app", Name: "a_b"}:  "app_a_b",
	}
	for ns, want := range cases {
		if got := ns.Prefix(); got != want {
			t.Errorf("%v: %s, want %s", ns, got, want)
		}
	}
	a, b := schema.Namespace{Kind: "cap", Name: "a-b"}.Prefix(), schema.Namespace{Kind: "cap", Name: "a_b"}.Prefix()
	c := schema.Namespace{Kind: "cap", Name: "A_b"}.Prefix()
	if a == b || c == b || !schema.ValidPrefix(a) || !schema.ValidPrefix(c) {
		t.Errorf("collision or invalid: %s %s %s", a, b, c)
	}
}

func TestRegistry_Register(t *testing.T) {
	reg := schema.NewRegistry()
	if _, err := reg.Register([]byte(noteSchema), "did:nuwa:cap:note@1.0.0"); err != nil {
		t.Fatal(err)
	}
	if _, err := reg.Register([]byte(noteSchema), "did:nuwa:cap:note@1.1.0"); err != nil {
		t.Errorf("same cap, same content: %v", err)
	}
	if _, err := reg.Register([]byte(noteSchema), "did:nuwa:cap:other@1.0.0"); !errors.Is(err, schema.ErrDuplicate) {
		t.Errorf("other cap: %v", err)
	}
	changed := strings.Replace(noteSchema, `"source_url"`, `"src"`, 1)
	if _, err := reg.Register([]byte(changed), "note"); !errors.Is(err, schema.ErrDuplicate) {
		t.Errorf("changed content: %v", err)
	}
}

// stateSchema is a minimal schema with the ACP-form URI did:nuwa:state:<uri>.
func stateSchema(uri string) []byte {
	return []byte(`{"$id":"did:nuwa:state:` + uri + `","type":"object","properties":{"text":{"type":"string"}}}`)
}

// A capability that declared did:nuwa:state:kitchen#v2 first used to keep
// the real kitchen from ever bumping to it. Now kitchen takes its own name
// back, and once kitchen is registered nobody else may take a name in its
// namespace; a name nobody owns stays first come, first served.
func TestRegistry_Register_stateNamespaceOwnership(t *testing.T) {
	reg := schema.NewRegistry()
	if _, err := reg.Register(stateSchema("kitchen#v2"), "did:nuwa:cap:squat@1.0.0"); err != nil {
		t.Fatalf("squat first (kitchen not here yet): %v", err)
	}
	if _, err := reg.Register(stateSchema("kitchen#v1"), "did:nuwa:cap:kitchen@1.0.0"); err != nil {
		t.Fatal(err)
	}
	got, err := reg.Register(stateSchema("kitchen#v2"), "did:nuwa:cap:kitchen@2.0.0")
	if err != nil {
		t.Fatalf("kitchen bumps to the squatted kitchen#v2: %v", err)
	}
	if got.Namespace != (schema.Namespace{Kind: "cap", Name: "kitchen"}) {
		t.Fatalf("kitchen#v2 is in %s, want cap:kitchen", got.Namespace)
	}
	if s, _ := reg.Lookup("did:nuwa:state:kitchen#v2"); s.Namespace.Name != "kitchen" {
		t.Fatalf("lookup: kitchen#v2 is still squat's (%s)", s.Namespace)
	}
	for _, uri := range []string{"kitchen#v2", "kitchen#v3"} {
		if _, err := reg.Register(stateSchema(uri), "did:nuwa:cap:squat@1.1.0"); !errors.Is(err, schema.ErrDuplicate) || !strings.Contains(err.Error(), "namespace") {
			t.Errorf("squat declares %s after kitchen: %v, want ErrDuplicate naming kitchen's namespace", uri, err)
		}
	}
	if _, err := reg.Register(stateSchema("memo#v1"), "did:nuwa:cap:note@1.0.0"); err != nil {
		t.Errorf("a name no capability owns: %v", err)
	}
	if _, err := reg.Register(stateSchema("memo#v1"), "did:nuwa:cap:other@1.0.0"); !errors.Is(err, schema.ErrDuplicate) {
		t.Errorf("the same unowned URI by another capability: %v, want ErrDuplicate", err)
	}
}
