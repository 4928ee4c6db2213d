package cap

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/agentnode/agentnode/capabilities"
	"github.com/agentnode/agentnode/jsonrpc"
)

// JSON-RPC methods of the CAP binding.
const (
	MethodList     = "capability.list"
	MethodDescribe = "capability.describe"
	MethodInvoke   = "capability.invoke"
)

// JSON-RPC codes of the CAP errors of list and describe (invoke always
// answers with an InvokeResult); the CAP code is also in error.data.cap_code.
// The CAP profile fixes only the string codes: the numbers are ours, chosen
// clear of the Agent Context Protocol's -32001..-32010 family that the same
// node serves on /acp (docs/JSONRPC.md).
const (
	CodeNotFound         = -32014
	CodePermissionDenied = -32013
	CodeExecutionFailed  = -32015
	CodeTimeout          = -32016
)

// Codes is CAP's table of JSON-RPC error codes besides the standard ones
// (jsonrpc.StandardCodes): each entry's Name is the CAP code it carries.
// INVALID_INPUT is the standard -32602.
var Codes = []jsonrpc.CodeDoc{
	{Code: CodePermissionDenied, Name: capabilities.CodePermissionDenied, Meaning: "a required permission is missing, or the endpoint serves another agent"},
	{Code: CodeNotFound, Name: capabilities.CodeNotFound, Meaning: "no capability with this id and version"},
	{Code: CodeExecutionFailed, Name: capabilities.CodeExecutionFailed, Meaning: "the capability failed while listing or describing"},
	{Code: CodeTimeout, Name: capabilities.CodeTimeout, Meaning: "the capability did not answer in time"},
}

// rpcCodes are the JSON-RPC codes of the CAP codes.
var rpcCodes = map[string]int{
	capabilities.CodeNotFound:         CodeNotFound,
	capabilities.CodeInvalidInput:     jsonrpc.CodeInvalidParams,
	capabilities.CodePermissionDenied: CodePermissionDenied,
	capabilities.CodeExecutionFailed:  CodeExecutionFailed,
	capabilities.CodeTimeout:          CodeTimeout,
}

// ErrAgentMismatch: params.agent names another agent than the one the
// connection is bound to.
var ErrAgentMismatch = &capabilities.Error{Code: capabilities.CodePermissionDenied, Message: "this endpoint serves another agent"}

// RegisterJSONRPC registers capability.list {agent?}, capability.describe
// {capability_id, version} and capability.invoke {ref: {capability_id,
// version}, input} on s. agentFrom names the agent the call is for (from
// the URL or the authenticated caller); when it returns "", params.agent
// is used; when both are set they must agree. Results: list -> an array of
// manifests, describe -> a manifest, invoke -> an InvokeResult.
func RegisterJSONRPC(s *jsonrpc.Server, h *Host, agentFrom func(ctx context.Context) (string, error)) {
	b := &binding{h: h, agentFrom: agentFrom}
	s.Register(MethodList, b.list)
	s.Register(MethodDescribe, b.describe)
	s.Register(MethodInvoke, b.invoke)
}

type binding struct {
	h         *Host
	agentFrom func(ctx context.Context) (string, error)
}

type listParams struct {
	Agent string `json:"agent"`
}

type describeParams struct {
	Agent string `json:"agent"`
	Ref
}

type invokeParams struct {
	Agent string          `json:"agent"`
	Ref   *Ref            `json:"ref"`
	Input json.RawMessage `json:"input"`
}

func (b *binding) list(ctx context.Context, raw json.RawMessage) (any, error) {
	var p listParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	agent, err := b.agent(ctx, p.Agent)
	if err != nil {
		return nil, err
	}
	ms, err := b.h.List(ctx, agent)
	if err != nil {
		return nil, rpcError(err)
	}
	if ms == nil {
		ms = []Manifest{}
	}
	return ms, nil
}

func (b *binding) describe(ctx context.Context, raw json.RawMessage) (any, error) {
	var p describeParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	if p.CapabilityID == "" {
		return nil, jsonrpc.InvalidParams("capability_id is required")
	}
	agent, err := b.agent(ctx, p.Agent)
	if err != nil {
		return nil, err
	}
	m, err := b.h.Describe(ctx, agent, p.Ref)
	if err != nil {
		return nil, rpcError(err)
	}
	return m, nil
}

func (b *binding) invoke(ctx context.Context, raw json.RawMessage) (any, error) {
	var p invokeParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	if p.Ref == nil || p.Ref.CapabilityID == "" {
		return nil, jsonrpc.InvalidParams("ref.capability_id is required")
	}
	agent, err := b.agent(ctx, p.Agent)
	if err != nil {
		return nil, err
	}
	return b.h.Invoke(ctx, agent, *p.Ref, p.Input), nil
}

// agent reconciles the bound agent with params.agent.
func (b *binding) agent(ctx context.Context, fromParams string) (string, error) {
	bound := ""
	if b.agentFrom != nil {
		var err error
		if bound, err = b.agentFrom(ctx); err != nil {
			return "", rpcError(err)
		}
	}
	switch {
	case bound == "" && fromParams == "":
		return "", jsonrpc.InvalidParams("agent is required")
	case bound == "":
		return fromParams, nil
	case fromParams != "" && fromParams != bound:
		return "", rpcError(ErrAgentMismatch)
	}
	return bound, nil
}

// decodeParams reads by-name params into v; by-position params are refused.
func decodeParams(raw json.RawMessage, v any) error {
	if len(raw) == 0 {
		return nil
	}
	if raw[0] != '{' {
		return jsonrpc.InvalidParams("params must be an object")
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return jsonrpc.InvalidParams("%v", err)
	}
	return nil
}

// rpcError maps a CAP error to a JSON-RPC error (code per rpcCodes, the
// CAP code in data); other errors stay internal.
func rpcError(err error) error {
	var ce *capabilities.Error
	if !errors.As(err, &ce) {
		return err
	}
	code, ok := rpcCodes[ce.Code]
	if !ok {
		code = jsonrpc.CodeInternalError
	}
	return &jsonrpc.Error{Code: code, Message: ce.Code + ": " + ce.Message, Data: map[string]string{"cap_code": ce.Code}}
}
