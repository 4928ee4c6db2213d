package schema

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/agentnode/agentnode/agentd/state/crdt"
)

// Lifecycle strategies of x-retention.
const (
	EvictLowImportance = "evict_low_importance" // beyond the window, evict the lowest importance first
	DropOldest         = "drop_oldest"          // beyond the window, evict the oldest first
)

// Visibilities of x-visibility.
const (
	Private = "private" // the owning agent and its owner
	Shared  = "shared"  // every agent of the same owner
	Public  = "public"  // anyone
)

// Compression codecs of x-compression.
const (
	Brotli = "br"
	Zstd   = "zstd"
	Gzip   = "gzip"
)

// Retention is x-retention: a sliding window and what to do beyond it.
type Retention struct {
	Window   Duration `json:"window"`
	Strategy string   `json:"strategy"`
}

// xasm is the decoded x-asm object before checks.
type xasm struct {
	Container   string          `json:"container"`
	CRDT        string          `json:"crdt"`
	KeyType     string          `json:"keyType"`
	ValueRef    string          `json:"valueRef"`
	TTL         string          `json:"x-ttl"`
	Retention   json.RawMessage `json:"x-retention"`
	Compression string          `json:"x-compression"`
	Visibility  string          `json:"x-visibility"`
}

// known x-asm keys; anything else is refused so typos do not pass silently.
var xasmKeys = []string{"container", "crdt", "keyType", "valueRef", "x-ttl", "x-retention", "x-compression", "x-visibility"}

// lifecycleKeys may also stand at the schema's top level, beside x-asm.
var lifecycleKeys = []string{"x-ttl", "x-retention", "x-compression", "x-visibility"}

// containerCRDTs lists the CRDTs a container may name in x-asm.crdt.
var containerCRDTs = map[string][]string{
	crdt.ContainerObject: {crdt.TypeORMap},
	crdt.ContainerMap:    {crdt.TypeORMap},
	crdt.ContainerList:   {crdt.TypeRGAList},
	crdt.ContainerLog:    {crdt.TypeLogRGA},
}

// readXASM merges the x-asm object with top-level lifecycle keys and
// decodes it.
func readXASM(doc map[string]any) (xasm, error) {
	var x xasm
	obj := map[string]any{}
	if v, ok := doc["x-asm"]; ok {
		m, ok := v.(map[string]any)
		if !ok {
			return x, invalidf("x-asm must be an object")
		}
		obj = m
	}
	for k := range obj {
		if !slices.Contains(xasmKeys, k) {
			return x, invalidf("x-asm: unknown key %q (known: %v)", k, xasmKeys)
		}
	}
	merged, err := mergeLifecycle(obj, doc)
	if err != nil {
		return x, err
	}
	raw, _ := json.Marshal(merged)
	if err := json.Unmarshal(raw, &x); err != nil {
		return x, invalidf("x-asm: %v", err)
	}
	return x, nil
}

// mergeLifecycle copies top-level x-ttl, x-retention, x-compression and
// x-visibility into the x-asm keys; the same key in both places must agree.
func mergeLifecycle(obj, doc map[string]any) (map[string]any, error) {
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		out[k] = v
	}
	for _, k := range lifecycleKeys {
		top, ok := doc[k]
		if !ok {
			continue
		}
		if in, dup := out[k]; dup && !sameJSON(in, top) {
			return nil, invalidf("%s is given in x-asm and at the top level with different values", k)
		}
		out[k] = top
	}
	return out, nil
}

func sameJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// apply checks x and stores it in s.
func (x xasm) apply(s *Schema) error {
	if err := x.container(s); err != nil {
		return err
	}
	if err := x.lifecycle(s); err != nil {
		return err
	}
	return x.visibility(s)
}

func (x xasm) container(s *Schema) error {
	s.Container = x.Container
	if s.Container == "" {
		s.Container = crdt.ContainerObject
	}
	def, err := crdt.DefaultCRDT(s.Container)
	if err != nil {
		return invalidf("x-asm.container: %q is not object, map, list or log", x.Container)
	}
	s.CRDT = def
	if x.CRDT == "" {
		return nil
	}
	name, err := crdtName(x.CRDT)
	if err != nil {
		return fmt.Errorf("x-asm.crdt: %w", err)
	}
	if !slices.Contains(containerCRDTs[s.Container], name) {
		return invalidf("x-asm.crdt: %s does not fit a %s container (want %v)", x.CRDT, s.Container, containerCRDTs[s.Container])
	}
	s.CRDT = name
	return nil
}

func (x xasm) lifecycle(s *Schema) error {
	if x.TTL != "" {
		d, err := ParseDuration(x.TTL)
		if err != nil {
			return fmt.Errorf("x-ttl: %w", err)
		}
		s.TTL = &d
	}
	if len(x.Retention) > 0 && string(x.Retention) != "null" {
		r, err := parseRetention(x.Retention)
		if err != nil {
			return err
		}
		s.Retention = r
	}
	switch x.Compression {
	case "", Brotli, Zstd, Gzip:
		s.Compression = x.Compression
		return nil
	}
	return invalidf("x-compression: %q is not br, zstd or gzip", x.Compression)
}

func parseRetention(raw json.RawMessage) (*Retention, error) {
	var r struct {
		Window   string `json:"window"`
		Strategy string `json:"strategy"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, invalidf("x-retention: want {window, strategy}: %v", err)
	}
	if r.Window == "" {
		return nil, invalidf("x-retention: window is required")
	}
	d, err := ParseDuration(r.Window)
	if err != nil {
		return nil, fmt.Errorf("x-retention.window: %w", err)
	}
	if r.Strategy != EvictLowImportance && r.Strategy != DropOldest {
		return nil, invalidf("x-retention.strategy: %q is not %s or %s", r.Strategy, EvictLowImportance, DropOldest)
	}
	return &Retention{Window: d, Strategy: r.Strategy}, nil
}

func (x xasm) visibility(s *Schema) error {
	switch x.Visibility {
	case "":
		s.Visibility = Private
	case Private, Shared, Public:
		s.Visibility = x.Visibility
	default:
		return invalidf("x-visibility: %q is not private, shared or public", x.Visibility)
	}
	return nil
}

// crdtName checks an x-crdt keyword against the crdt registry and returns
// its canonical name (append_only is log_rga).
func crdtName(name string) (string, error) {
	if _, err := crdt.New(name); err != nil {
		return "", fmt.Errorf("%w: %w", ErrInvalidSchema, err)
	}
	if name == crdt.TypeAppendOnly {
		return crdt.TypeLogRGA, nil
	}
	return name, nil
}
