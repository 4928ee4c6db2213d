package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/agentnode/agentnode/agentd/state"
	"github.com/agentnode/agentnode/agentd/state/schema"
	"github.com/agentnode/agentnode/agentd/state/store"
	"github.com/agentnode/agentnode/events"
)

// stateFlags are the flags every state subcommand shares. The operator acts
// as the owner of the data (or as one of its agents with --agent), holding
// every state verb and storage.large, outside any capability.
type stateFlags struct {
	data, owner, agent, scope string
	schema, id                string
	json                      bool
}

func (m *Main) addStateFlags(fs *flag.FlagSet, f *stateFlags, withDoc bool) {
	fs.StringVar(&f.data, "data", m.envOr("AGENTNODE_DATA", DefaultDataDir), "data directory (env AGENTNODE_DATA)")
	fs.StringVar(&f.owner, "owner", m.envOr("AGENTNODE_OWNER", ""), "owner to act as, npub or hex (env AGENTNODE_OWNER)")
	fs.StringVar(&f.agent, "agent", "", "act as this agent of the owner (npub or hex); default: the owner itself")
	fs.StringVar(&f.scope, "scope", "", "memory scope: reads see only this scope; new documents get it")
	fs.BoolVar(&f.json, "json", false, "print JSON")
	if withDoc {
		fs.StringVar(&f.schema, "schema", "", "schema URI, e.g. did:nuwa:state:note#v1 or did:nuwa:core:AgentSettings#v1")
		fs.StringVar(&f.id, "id", "", "document id")
	}
}

// caller builds the operator's Caller.
func (f *stateFlags) caller(cmd string) (state.Caller, error) {
	if f.owner == "" {
		return state.Caller{}, usagef("%s: --owner (or AGENTNODE_OWNER) is required", cmd)
	}
	owner, err := events.ParsePubKey(f.owner)
	if err != nil {
		return state.Caller{}, usagef("%s: --owner: %v", cmd, err)
	}
	c := state.Caller{Owner: owner, Scope: f.scope, Verbs: state.AllVerbs, Large: true}
	if f.agent != "" {
		if c.Agent, err = events.ParsePubKey(f.agent); err != nil {
			return state.Caller{}, usagef("%s: --agent: %v", cmd, err)
		}
	}
	return c, nil
}

func (f *stateFlags) needDoc(cmd string) error {
	if f.schema == "" || f.id == "" {
		return usagef("%s: --schema and --id are required", cmd)
	}
	return nil
}

// openState opens the runtime in the data directory, quietly.
func openState(ctx context.Context, m *Main, dir string) (*state.Runtime, error) {
	logger := slog.New(slog.NewTextHandler(m.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	rt, err := state.Open(ctx, state.Options{Dir: dir, Logger: logger})
	if err != nil {
		return nil, fmt.Errorf("open state in %s: %w", dir, err)
	}
	return rt, nil
}

// withState parses flags, builds the caller, opens the runtime and runs fn.
func withState(ctx context.Context, m *Main, cmd string, f *stateFlags, fn func(*state.Runtime, state.Caller) error) error {
	c, err := f.caller(cmd)
	if err != nil {
		return err
	}
	rt, err := openState(ctx, m, f.data)
	if err != nil {
		return err
	}
	defer rt.Close(context.Background())
	if err := fn(rt, c); err != nil {
		return fmt.Errorf("%s: %w", cmd, err)
	}
	return nil
}

const stateGetUsage = "state get --owner NPUB --schema URI --id ID [--agent NPUB] [--scope S] [--data DIR] [--json]"

func runStateGet(ctx context.Context, m *Main, args []string) error {
	return runStateDoc(ctx, m, "state get", stateGetUsage, args, func(rt *state.Runtime, c state.Caller, f *stateFlags) error {
		d, err := rt.Get(ctx, c, f.schema, f.id)
		if err != nil {
			return err
		}
		return m.printDocument(d, f.json)
	})
}

// runStateDoc runs a subcommand that takes the shared flags, --schema and
// --id, and no arguments.
func runStateDoc(ctx context.Context, m *Main, cmd, usage string, args []string, fn func(*state.Runtime, state.Caller, *stateFlags) error) error {
	f := &stateFlags{}
	fs := m.newFlagSet(cmd, usage)
	m.addStateFlags(fs, f, true)
	if err := parseNoArgs(fs, cmd, args); err != nil {
		return err
	}
	if err := f.needDoc(cmd); err != nil {
		return err
	}
	return withState(ctx, m, cmd, f, func(rt *state.Runtime, c state.Caller) error {
		return fn(rt, c, f)
	})
}

const stateQueryUsage = "state query --owner NPUB [QUERY | --file F] [--agent NPUB] [--scope S] [--data DIR] [--json]"

func runStateQuery(ctx context.Context, m *Main, args []string) error {
	const cmd = "state query"
	f := &stateFlags{}
	var file string
	fs := m.newFlagSet(cmd, stateQueryUsage)
	m.addStateFlags(fs, f, false)
	fs.StringVar(&file, "file", "", "read the ASM-QL query from FILE (- for stdin)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	q, err := inlineOrFile(m, cmd, pos, file, "query")
	if err != nil {
		return err
	}
	return withState(ctx, m, cmd, f, func(rt *state.Runtime, c state.Caller) error {
		res, err := rt.Query(ctx, c, q)
		if err != nil {
			return err
		}
		return m.printRows(res, f.json)
	})
}

const stateHistoryUsage = "state history --owner NPUB --schema URI --id ID [--agent NPUB] [--data DIR] [--json]"

func runStateHistory(ctx context.Context, m *Main, args []string) error {
	return runStateDoc(ctx, m, "state history", stateHistoryUsage, args, func(rt *state.Runtime, c state.Caller, f *stateFlags) error {
		envs, err := rt.History(ctx, c, f.schema, f.id)
		if err != nil {
			return err
		}
		return m.printHistory(envs, f.json)
	})
}

func parseNoArgs(fs *flag.FlagSet, cmd string, args []string) error {
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("%s: unexpected argument %q", cmd, fs.Arg(0))
	}
	return nil
}

// inlineOrFile returns the single positional argument or the file's
// content ("-" is stdin).
func inlineOrFile(m *Main, cmd string, pos []string, file, what string) ([]byte, error) {
	switch {
	case len(pos) > 1:
		return nil, usagef("%s: one %s at most", cmd, what)
	case len(pos) == 1 && file != "":
		return nil, usagef("%s: give the %s inline or with --file, not both", cmd, what)
	case len(pos) == 1:
		return []byte(pos[0]), nil
	case file == "":
		return nil, usagef("%s: no %s given", cmd, what)
	}
	return readFileOrStdin(m, file)
}

func readFileOrStdin(m *Main, file string) ([]byte, error) {
	if file == "-" {
		return io.ReadAll(m.Stdin)
	}
	return os.ReadFile(file)
}

func (m *Main) printDocument(d *state.Document, asJSON bool) error {
	m.warnDocument(d, "")
	if asJSON {
		return writeJSON(m.Stdout, d)
	}
	fmt.Fprintf(m.Stdout, "%s %s (owner %s, agent %s, %s, scope %s, %d bytes)\n", d.Schema, d.ID,
		shortNpub(d.Owner), shortNpub(d.Agent), d.Visibility, d.Scope, d.Size)
	var v any
	if err := json.Unmarshal(d.Object, &v); err != nil {
		return err
	}
	return writeJSON(m.Stdout, v)
}

func (m *Main) printRows(res *state.QueryResult, asJSON bool) error {
	if asJSON {
		return writeJSON(m.Stdout, res)
	}
	if len(res.Rows) == 0 {
		fmt.Fprintln(m.Stderr, "no documents match") // stdout stays empty for scripts
	}
	for _, row := range res.Rows {
		b, err := json.Marshal(row)
		if err != nil {
			return err
		}
		fmt.Fprintln(m.Stdout, string(b))
		if id, _ := row["id"].(string); res.Concurrent[id] != nil {
			m.warnDocument(&state.Document{Concurrent: res.Concurrent[id]}, id+": ")
		}
	}
	if res.NextCursor != "" {
		fmt.Fprintf(m.Stderr, "more: add \"cursor\": %q to the query\n", res.NextCursor)
	}
	return nil
}

func (m *Main) printHistory(envs []store.Envelope, asJSON bool) error {
	if asJSON {
		return writeJSON(m.Stdout, nonNil(envs))
	}
	tw := newTable(m.Stdout)
	fmt.Fprintln(tw, "SEQ\tACTION\tOP\tHLC\tFIELD\tKIND")
	for _, e := range envs {
		field, kind := "", e.Op.Kind
		if e.Op.Child != nil {
			field, kind = e.Op.Key, e.Op.Child.Kind
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d.%d\t%s\t%s\n", e.Seq, e.Action, e.OpID(), e.Op.TS.Wall, e.Op.TS.Logical, orDash(field), kind)
	}
	return tw.Flush()
}

// statePutFlags holds state put's command line.
type statePutFlags struct {
	stateFlags
	object, file, patch string
	schemaFile, capID   string
}

const statePutUsage = "state put --owner NPUB --schema URI [--id ID] (--object JSON | --file F | --patch JSON) [--schema-file F --cap CAP_ID] [--agent NPUB] [--scope S] [--data DIR] [--json]"

// runStatePut: with --patch, state.update of an existing document; with an
// object, state.create when the id is new, else a replacement of the whole
// document (a JSON Patch replacing the root, so fields still merge per
// their CRDTs). --schema-file registers a capability's schema first.
func runStatePut(ctx context.Context, m *Main, args []string) error {
	const cmd = "state put"
	f := &statePutFlags{}
	fs := m.newFlagSet(cmd, statePutUsage)
	m.addStateFlags(fs, &f.stateFlags, true)
	fs.StringVar(&f.object, "object", "", "the document as JSON")
	fs.StringVar(&f.file, "file", "", "read the document from FILE (- for stdin)")
	fs.StringVar(&f.patch, "patch", "", "JSON Patch (or {$set,$inc,$push}) to apply to --id")
	fs.StringVar(&f.schemaFile, "schema-file", "", "register this ASM schema (JSON) first")
	fs.StringVar(&f.capID, "cap", "", "the capability declaring --schema-file (did:nuwa:cap:<name>@<version>)")
	if err := parseNoArgs(fs, cmd, args); err != nil {
		return err
	}
	if f.schema == "" {
		return usagef("%s: --schema is required", cmd)
	}
	body, isPatch, err := f.input(m, cmd)
	if err != nil {
		return err
	}
	return withState(ctx, m, cmd, &f.stateFlags, func(rt *state.Runtime, c state.Caller) error {
		if err := f.register(ctx, m, rt); err != nil {
			return err
		}
		in := body
		body = nil // the put owns the only reference: a large value is not held twice
		d, err := f.put(ctx, rt, c, in, isPatch)
		if err != nil {
			return err
		}
		if !f.json && d.Size > putEchoMax {
			m.warnDocument(d, "")
			fmt.Fprintf(m.Stdout, "%s %s (owner %s, agent %s, %s, scope %s, %d bytes; not printed, over %d: state get or --json prints it)\n",
				d.Schema, d.ID, shortNpub(d.Owner), shortNpub(d.Agent), d.Visibility, d.Scope, d.Size, putEchoMax)
			return nil
		}
		return m.printDocument(d, f.json)
	})
}

// putEchoMax is the largest document state put prints back without --json;
// a larger one gets its summary line only (echoing a 33 MiB value decoded and
// re-indented it: ≈ 3 more copies of it in memory at the end of the put).
const putEchoMax = 64 << 10

// input returns the object or patch given on the command line.
func (f *statePutFlags) input(m *Main, cmd string) ([]byte, bool, error) {
	given := 0
	for _, s := range []string{f.object, f.file, f.patch} {
		if s != "" {
			given++
		}
	}
	switch {
	case given != 1:
		return nil, false, usagef("%s: give exactly one of --object, --file, --patch", cmd)
	case f.patch != "" && f.id == "":
		return nil, false, usagef("%s: --patch needs --id", cmd)
	case f.patch != "":
		return []byte(f.patch), true, nil
	case f.object != "":
		return []byte(f.object), false, nil
	}
	b, err := readFileOrStdin(m, f.file)
	if err != nil {
		return nil, false, fmt.Errorf("%s: read %s: %w", cmd, f.file, err)
	}
	return b, false, nil
}

func (f *statePutFlags) register(ctx context.Context, m *Main, rt *state.Runtime) error {
	if f.schemaFile == "" {
		return nil
	}
	if f.capID == "" {
		return usagef("--schema-file needs --cap")
	}
	raw, err := readFileOrStdin(m, f.schemaFile)
	if err != nil {
		return err
	}
	if _, err = rt.Register(ctx, f.capID, raw); err == nil {
		fmt.Fprintf(m.Stderr, "warning: schema from %s registered LOCAL-ONLY and UNSIGNED: no signed capability package vouches for it, and other nodes do not learn it (install the signed package there too)\n", f.schemaFile)
	}
	return err
}

// put creates, replaces or patches. Core models exist already, so an
// object for one replaces it.
func (f *statePutFlags) put(ctx context.Context, rt *state.Runtime, c state.Caller, body []byte, isPatch bool) (*state.Document, error) {
	if isPatch {
		return rt.Update(ctx, c, f.schema, f.id, body)
	}
	if f.id != "" {
		var err error
		if body, err = setID(body, f.id); err != nil {
			return nil, err
		}
	}
	sch, known := rt.Schemas().Lookup(f.schema)
	if !known || sch.Namespace.Kind != schema.KindCore {
		if f.id == "" {
			return rt.Create(ctx, c, f.schema, body)
		}
		// A new id is created with the only reference to the object given
		// away (a large value is not held by the caller through the put);
		// an id that exists is replaced below.
		_, gerr := rt.Get(ctx, c, f.schema, f.id)
		if errors.Is(gerr, state.ErrNotFound) {
			in := body
			body = nil
			d, err := rt.Create(ctx, c, f.schema, in)
			if errors.Is(err, state.ErrConflict) {
				return nil, gerr // tombstoned, or not visible to the caller: as the replace would say
			}
			return d, err
		}
	}
	if f.id == "" {
		return nil, usagef("--id is required to replace a core model")
	}
	if !sch.HasProp("id") {
		body, _ = withID(body, "") // the id names the document; the object has no id field
	}
	replace, _ := json.Marshal([]map[string]any{{"op": "replace", "path": "", "value": json.RawMessage(body)}})
	return rt.Update(ctx, c, f.schema, f.id, replace)
}

// setID sets the object's "id" to id without re-encoding the object: it is
// returned as is when its "id" already is id, and with `"id":…,` spliced in
// after the opening brace when it has none; only an object with another id
// goes through withID (which holds the object twice more).
func setID(body []byte, id string) ([]byte, error) {
	var keys map[string]rawRef
	if err := json.Unmarshal(body, &keys); err != nil {
		return nil, fmt.Errorf("the document must be a JSON object: %w", err)
	}
	if keys == nil {
		return nil, errors.New("the document must be a JSON object, not null")
	}
	enc, _ := json.Marshal(id)
	old, has := keys["id"]
	switch {
	case has && bytes.Equal(old, enc):
		return body, nil
	case has:
		return withID(body, id)
	}
	open := bytes.IndexByte(body, '{')
	out := make([]byte, 0, len(body)+len(enc)+6)
	out = append(out, body[:open+1]...)
	out = append(out, `"id":`...)
	out = append(out, enc...)
	if len(keys) > 0 {
		out = append(out, ',')
	}
	return append(out, body[open+1:]...), nil
}

// rawRef keeps a JSON value as a slice of the input (no copy, unlike
// json.RawMessage); valid while the input is.
type rawRef []byte

func (r *rawRef) UnmarshalJSON(b []byte) error { *r = b; return nil }

// withID sets the object's "id" to id, or removes it when id is "".
func withID(body []byte, id string) ([]byte, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(body, &obj); err != nil {
		return nil, fmt.Errorf("the document must be a JSON object: %w", err)
	}
	if id == "" {
		delete(obj, "id")
	} else {
		obj["id"], _ = json.Marshal(id)
	}
	return json.Marshal(obj)
}
