// Package httplimit bounds HTTP request bodies and answers 413 Request
// Entity Too Large when a body is over its bound.
//
// Body is the node-wide bound in front of every endpoint: a declared
// Content-Length over it is refused before the handler runs; a chunked
// body that grows past it fails the handler's reads with
// *http.MaxBytesError (TooLarge), and the handler answers 413 in its own
// format. Buffer is for handlers that read the body themselves and would
// answer anything but 413 (the MCP SDK): it reads the body first.
//
//	srv.Handler = httplimit.Body(1<<20, mux)
//	mux.Handle("/mcp", httplimit.Buffer(1<<20, mcpHandler))
package httplimit
