// Package cap is the node's CAP (Capability Protocol Profile 0.1.0) host:
// capability.list, capability.describe and capability.invoke over a Source
// of capabilities the agent daemon implements, with input validated against
// each manifest's input_schema (JSON Schema 2020-12, compiled once per
// manifest), deadlines turned into TIMEOUT, output checked against a
// declared output_schema, and the result always in CAP's InvokeResult
// shape. ManifestsFor maps an ACP package to its manifests (one skill, one
// tool per package tool); RegisterJSONRPC serves the three operations as
// JSON-RPC methods. docs/CAP.md is the mapping and the wire format.
//
// A use:
//
//	host := cap.NewHost(daemonSource, cap.Options{Timeout: 30 * time.Second})
//	res := host.Invoke(ctx, agentPubKey,
//		cap.Ref{CapabilityID: "did:nuwa:cap:note/fetch_web_content", Version: "1.0.0"},
//		json.RawMessage(`{"url":"https://example.org"}`))
//	if !res.OK {
//		log.Println(res.Error.Code, res.Error.Message)
//	}
package cap
