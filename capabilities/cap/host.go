package cap

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/agentnode/agentnode/capabilities"
)

// Options configures a Host. The zero value is usable.
type Options struct {
	// Timeout bounds one invocation (default DefaultTimeout); a shorter
	// deadline on the caller's ctx wins.
	Timeout time.Duration
}

// DefaultTimeout is the default Options.Timeout.
const DefaultTimeout = 60 * time.Second

// Host serves CAP's list, describe and invoke over a Source. It is safe for
// concurrent use.
type Host struct {
	src     Source
	opts    Options
	schemas *schemaCache
}

// NewHost returns a host over src.
func NewHost(src Source, opts Options) *Host {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	return &Host{src: src, opts: opts, schemas: newSchemaCache()}
}

// List returns the manifests of agent's capabilities.
func (h *Host) List(ctx context.Context, agent string) ([]Manifest, error) {
	caps, err := h.src.Capabilities(ctx, agent)
	if err != nil {
		return nil, err
	}
	out := make([]Manifest, 0, len(caps))
	for _, c := range caps {
		if !c.Hidden {
			out = append(out, manifest(ctx, c))
		}
	}
	return out, nil
}

// manifest is c's manifest with the output schema its Source supplies
// when the manifest declares none.
func manifest(ctx context.Context, c Capability) Manifest {
	m := c.Manifest
	if isNull(m.OutputSchema) && c.OutputSchema != nil {
		m.OutputSchema = c.OutputSchema(ctx)
	}
	return m
}

// Describe returns the manifest ref names, or a NOT_FOUND
// *capabilities.Error. An empty ref.Version means the latest
// (CompareForLatest: releases above pre-releases); a version range ("1",
// "^1.0.0", ">=1.2 <2", ParseRange) means the highest version it matches.
func (h *Host) Describe(ctx context.Context, agent string, ref Ref) (Manifest, error) {
	c, err := h.find(ctx, agent, ref)
	if err != nil {
		return Manifest{}, err
	}
	if c.Hidden {
		return Manifest{}, notFound(ref)
	}
	return manifest(ctx, c), nil
}

// find returns the capability ref names among agent's.
func (h *Host) find(ctx context.Context, agent string, ref Ref) (Capability, error) {
	caps, err := h.src.Capabilities(ctx, agent)
	if err != nil {
		return Capability{}, err
	}
	match := versionMatcher(ref.Version)
	best, found := Capability{}, false
	for _, c := range caps {
		m := c.Manifest
		if m.CapabilityID != ref.CapabilityID || !match(m.Version) {
			continue
		}
		if !found || CompareForLatest(m.Version, best.Manifest.Version) > 0 {
			best, found = c, true
		}
	}
	if !found {
		return Capability{}, notFound(ref)
	}
	return best, nil
}

// versionMatcher is the test of a Ref's version: any ("" = the latest),
// the same string, or, when want is a range, a version in it.
func versionMatcher(want string) func(string) bool {
	if want == "" {
		return func(string) bool { return true }
	}
	r, isRange := ParseRange(want)
	return func(v string) bool { return v == want || (isRange && r.Match(v)) }
}

func notFound(ref Ref) *capabilities.Error {
	if ref.Version == "" {
		return capabilities.Errorf(capabilities.CodeNotFound, "no capability %q", ref.CapabilityID)
	}
	return capabilities.Errorf(capabilities.CodeNotFound, "no capability %q version %q", ref.CapabilityID, ref.Version)
}

// Invoke runs the capability ref names with input and reports the outcome
// as an InvokeResult (never an error): NOT_FOUND, INVALID_INPUT (input
// does not match input_schema; the message says where), TIMEOUT (the
// deadline passed), EXECUTION_FAILED (the run failed, or its output does
// not match a declared output_schema), or the Source's own coded error.
// An empty input means {}.
func (h *Host) Invoke(ctx context.Context, agent string, ref Ref, input json.RawMessage) InvokeResult {
	start := time.Now()
	out, err := h.invoke(ctx, agent, ref, input)
	res := InvokeResult{DurationMS: time.Since(start).Milliseconds()}
	if err != nil {
		res.Error = coded(err)
		return res
	}
	res.OK, res.Output = true, out
	return res
}

func (h *Host) invoke(ctx context.Context, agent string, ref Ref, input json.RawMessage) (json.RawMessage, error) {
	c, err := h.find(ctx, agent, ref)
	if err != nil {
		return nil, err
	}
	if len(input) == 0 {
		input = json.RawMessage("{}")
	}
	if err := h.check(c.Manifest.InputSchema, input, capabilities.CodeInvalidInput, "input"); err != nil {
		return nil, err
	}
	out, err := h.run(ctx, agent, c, input)
	if err != nil {
		return nil, err
	}
	if err := h.checkOutput(manifest(ctx, c), out); err != nil {
		return nil, err
	}
	return out, nil
}

// run calls the Source under the host's deadline; a deadline that passed
// while it ran is a TIMEOUT whatever it returned.
func (h *Host) run(ctx context.Context, agent string, c Capability, input json.RawMessage) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(ctx, h.opts.Timeout)
	defer cancel()
	out, err := h.src.Run(ctx, agent, c, input)
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return nil, &capabilities.Error{Code: capabilities.CodeTimeout,
			Message: fmt.Sprintf("%s did not finish before its deadline", c.Manifest.CapabilityID), Err: err}
	}
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return json.RawMessage("null"), nil
	}
	if !json.Valid(out) {
		return nil, capabilities.Errorf(capabilities.CodeExecutionFailed, "%s returned output that is not JSON", c.Manifest.CapabilityID)
	}
	return out, nil
}

// checkOutput validates out against m's output_schema when one is declared.
func (h *Host) checkOutput(m Manifest, out json.RawMessage) error {
	if isNull(m.OutputSchema) {
		return nil
	}
	return h.check(m.OutputSchema, out, capabilities.CodeExecutionFailed, "output")
}

// check validates doc against schema; a mismatch is a coded error (code),
// and a schema that does not compile is EXECUTION_FAILED.
func (h *Host) check(schema, doc json.RawMessage, code, what string) error {
	if isNull(schema) {
		return nil
	}
	s, err := h.schemas.get(schema)
	if err != nil {
		return &capabilities.Error{Code: capabilities.CodeExecutionFailed,
			Message: fmt.Sprintf("the capability's %s_schema does not compile", what), Err: err}
	}
	if err := validate(s, doc); err != nil {
		return &capabilities.Error{Code: code,
			Message: fmt.Sprintf("%s does not match %s_schema: %v", what, what, err), Err: err}
	}
	return nil
}

func isNull(raw json.RawMessage) bool {
	return len(raw) == 0 || string(raw) == "null"
}

// coded turns err into the error an InvokeResult carries: the Source's
// *capabilities.Error as is, a deadline as TIMEOUT, anything else as
// EXECUTION_FAILED without its internal text.
func coded(err error) *capabilities.Error {
	var ce *capabilities.Error
	if errors.As(err, &ce) {
		return &capabilities.Error{Code: ce.Code, Message: ce.Message}
	}
	code := capabilities.CodeOf(err)
	if code == capabilities.CodeTimeout {
		return capabilities.Errorf(code, "the capability did not finish before its deadline")
	}
	return capabilities.Errorf(code, "the capability failed")
}
