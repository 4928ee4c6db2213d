package jsonrpc

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"sync"
)

// Handler runs one method call. params is the request's params member as
// received (an object for by-name, an array for by-position, or nil when
// absent). The result is marshaled to JSON; an error becomes the response's
// error object (see toError). Handlers must be safe for concurrent use.
type Handler func(ctx context.Context, params json.RawMessage) (any, error)

// Options configures a Server. The zero value is usable.
type Options struct {
	// MaxRequestBytes bounds one HTTP body or WebSocket frame
	// (default 1 MiB). A larger one is refused before it is parsed.
	MaxRequestBytes int64
	// MapError turns a handler error that is not an *Error into one (for
	// application codes such as the ACP's -32001 family); nil or a nil
	// answer means InternalError.
	MapError func(error) *Error
	// Logger receives handler failures and panics (default slog.Default()).
	Logger *slog.Logger
	// CheckOrigin decides WebSocket upgrades (default: same-origin or no
	// Origin header).
	CheckOrigin func(r *http.Request) bool
	// MaxBatch bounds the entries of one batch (default 100). A longer
	// batch runs nothing and is answered with one -32600 error.
	MaxBatch int
	// MaxResponseBytes bounds one answer, a single response or a whole
	// batch's (default 4 MiB). A result that does not fit is replaced by a
	// -32600 error with its id; in a batch, the entries after it are not
	// run and are answered with the same error.
	MaxResponseBytes int
	// Fallback serves the methods no handler is registered for (a
	// transport whose methods are not known in advance, such as the
	// kind-25910 dialect's tool names); it returns ErrMethodNotFound
	// (wrapped or not) for a method it does not serve. nil: such methods
	// are answered -32601.
	Fallback func(ctx context.Context, method string, params json.RawMessage) (any, error)
}

// Defaults of Options.
const (
	DefaultMaxRequestBytes  = 1 << 20
	DefaultMaxBatch         = 100
	DefaultMaxResponseBytes = 4 << 20
)

// Server dispatches JSON-RPC 2.0 requests to registered handlers. It is an
// http.Handler (POST and WebSocket). Register before serving.
type Server struct {
	opts    Options
	mu      sync.RWMutex
	methods map[string]Handler
}

// NewServer returns a server with no methods.
func NewServer(opts Options) *Server {
	if opts.MaxRequestBytes <= 0 {
		opts.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.MaxBatch <= 0 {
		opts.MaxBatch = DefaultMaxBatch
	}
	if opts.MaxResponseBytes <= 0 {
		opts.MaxResponseBytes = DefaultMaxResponseBytes
	}
	return &Server{opts: opts, methods: map[string]Handler{}}
}

// Register sets the handler of method, replacing any earlier one.
func (s *Server) Register(method string, h Handler) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.methods[method] = h
}

// Methods returns the registered method names (unordered).
func (s *Server) Methods() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	names := make([]string, 0, len(s.methods))
	for m := range s.methods {
		names = append(names, m)
	}
	return names
}

func (s *Server) handler(method string) (Handler, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	h, ok := s.methods[method]
	return h, ok
}

// Handle processes one message (a request or a batch) and returns the raw
// response to send, or nil when nothing is to be sent (notifications
// only). It is the transport-independent core of ServeHTTP and the
// WebSocket loop.
func (s *Server) Handle(ctx context.Context, msg []byte) []byte {
	if !json.Valid(msg) {
		return mustMarshal(errorResponse(nil, ErrParse))
	}
	if isBatch(msg) {
		return s.handleBatch(ctx, msg)
	}
	resp := s.handleOne(ctx, msg)
	if resp == nil {
		return nil
	}
	b := mustMarshal(resp)
	if len(b) > s.opts.MaxResponseBytes {
		return mustMarshal(errorResponse(resp.ID, s.errResponseTooLarge()))
	}
	return b
}

// handleBatch runs a batch's entries in order, within MaxBatch entries and
// MaxResponseBytes of answer.
func (s *Server) handleBatch(ctx context.Context, msg []byte) []byte {
	items, err := splitBatch(msg, s.opts.MaxBatch)
	if err != nil {
		return mustMarshal(errorResponse(nil, err))
	}
	out := make([]json.RawMessage, 0, len(items))
	size, full := 2, false // the brackets
	for _, item := range items {
		b := s.batchEntry(ctx, item, full)
		if b == nil {
			continue
		}
		if !full && size+len(b)+1 > s.opts.MaxResponseBytes {
			full = true
			b = s.batchEntry(ctx, item, full)
		}
		size += len(b) + 1
		out = append(out, b)
	}
	if len(out) == 0 {
		return nil
	}
	return mustMarshal(out)
}

// batchEntry answers one batch entry: runs it, or, once the batch's answer
// is full, does not and answers the too-large error with its id (nil for a
// notification either way).
func (s *Server) batchEntry(ctx context.Context, item json.RawMessage, full bool) json.RawMessage {
	if !full {
		if resp := s.handleOne(ctx, item); resp != nil {
			return mustMarshal(resp)
		}
		return nil
	}
	var req Request
	if json.Unmarshal(item, &req) == nil && wellFormed(&req) && req.ID == nil {
		return nil
	}
	return mustMarshal(errorResponse(idOf(item), s.errResponseTooLarge()))
}

// splitBatch splits a batch (valid JSON, an array) into its entries,
// refusing an empty one and one of more than max entries without reading
// past entry max+1.
func splitBatch(msg []byte, max int) ([]json.RawMessage, *Error) {
	dec := json.NewDecoder(bytes.NewReader(msg))
	if _, err := dec.Token(); err != nil { // [
		return nil, ErrInvalidRequest
	}
	var items []json.RawMessage
	for dec.More() {
		if len(items) == max {
			return nil, Errorf(CodeInvalidRequest, "invalid request: a batch may hold at most %d entries", max)
		}
		var item json.RawMessage
		if err := dec.Decode(&item); err != nil {
			return nil, ErrInvalidRequest
		}
		items = append(items, item)
	}
	if len(items) == 0 {
		return nil, ErrInvalidRequest
	}
	return items, nil
}

// errResponseTooLarge answers a result (or the rest of a batch) that does
// not fit in MaxResponseBytes.
func (s *Server) errResponseTooLarge() *Error {
	return Errorf(CodeInvalidRequest, "invalid request: the response would exceed %d bytes", s.opts.MaxResponseBytes)
}

// handleOne runs one request; nil for a notification.
func (s *Server) handleOne(ctx context.Context, raw json.RawMessage) *Response {
	var req Request
	if err := json.Unmarshal(raw, &req); err != nil || !wellFormed(&req) {
		return errorResponse(idOf(raw), ErrInvalidRequest)
	}
	result, rpcErr := s.call(ctx, &req)
	if req.ID == nil {
		return nil
	}
	if rpcErr != nil {
		return errorResponse(req.ID, rpcErr)
	}
	return &Response{JSONRPC: "2.0", Result: result, ID: req.ID}
}

// wellFormed reports whether req is a JSON-RPC 2.0 request: version 2.0,
// a method (an empty name is none), an id that is a string, a number or
// null (or absent), params absent, an object or an array.
func wellFormed(req *Request) bool {
	return req.JSONRPC == "2.0" && req.Method != "" && validID(req.ID) && validParams(req.Params)
}

// idOf extracts a usable id from an invalid request, else null.
func idOf(raw json.RawMessage) json.RawMessage {
	var probe struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(raw, &probe) == nil && len(probe.ID) > 0 && validID(probe.ID) {
		return probe.ID
	}
	return nil
}

// call dispatches req to its handler, turning errors and panics into
// error objects.
func (s *Server) call(ctx context.Context, req *Request) (result json.RawMessage, rpcErr *Error) {
	h, ok := s.handler(req.Method)
	if !ok {
		if s.opts.Fallback == nil {
			return nil, ErrMethodNotFound
		}
		h = func(ctx context.Context, params json.RawMessage) (any, error) {
			return s.opts.Fallback(ctx, req.Method, params)
		}
	}
	defer func() {
		if p := recover(); p != nil {
			s.opts.Logger.Error("jsonrpc handler panic", "method", req.Method, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			result, rpcErr = nil, ErrInternal
		}
	}()
	v, err := h(ctx, req.Params)
	if err != nil {
		rpcErr = toError(err, s.opts.MapError)
		if rpcErr.Code == CodeInternalError {
			s.opts.Logger.Error("jsonrpc handler failed", "method", req.Method, "err", err)
		}
		return nil, rpcErr
	}
	b, err := json.Marshal(v)
	if err != nil {
		s.opts.Logger.Error("jsonrpc result marshal", "method", req.Method, "err", err)
		return nil, ErrInternal
	}
	return b, nil
}

func mustMarshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("jsonrpc: marshal response: %v", err)) // responses hold only raw JSON and *Error
	}
	return b
}
