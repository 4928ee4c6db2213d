// Package jsonrpc is the node's one JSON-RPC 2.0: the wire types (Request,
// Response, Error), the server every transport dispatches through and the
// HTTP client (HTTPClient). Methods are registered as handlers that take
// raw params and return any JSON-marshalable result. The server serves
// HTTP POST (one request or a batch per body) and WebSocket (one request
// or batch per text frame), and Server.Handle serves any other transport's
// message: the kind-25910 dialect (agentd/nostrrpc) hands it each
// decrypted request, with Options.Fallback for the methods it learns per
// call (tool names). CAP (capabilities/cap) registers its capability.*
// methods on it; the Agent Context Protocol its agent/*. Each protocol's
// error codes are a []CodeDoc table (docs/JSONRPC.md).
//
// A use:
//
//	s := jsonrpc.NewServer(jsonrpc.Options{})
//	s.Register("echo", func(ctx context.Context, params json.RawMessage) (any, error) {
//		return params, nil
//	})
//	http.Handle("/rpc", s)
//
// A handler fails with a *jsonrpc.Error to choose the code the caller sees
// (InvalidParams, an application code such as the ACP's -32001 family, ...);
// any other error becomes InternalError, mapped through Options.MapError
// when set, and a handler panic becomes InternalError with no internal text.
//
// Limits (Options): a body or frame over MaxRequestBytes is refused
// unparsed (HTTP 413 with a -32600 error; WebSocket close 1009); a batch of
// more than MaxBatch entries runs nothing and is answered with one -32600
// error ("a batch may hold at most N entries"); an answer that would
// exceed MaxResponseBytes has the result that overflowed replaced by a
// -32600 error ("the response would exceed N bytes") with its id, and in a
// batch the entries after it are not run and get the same error.
package jsonrpc
