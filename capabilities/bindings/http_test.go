package bindings_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agentnode/agentnode/capabilities"
	"github.com/agentnode/agentnode/capabilities/acp"
	"github.com/agentnode/agentnode/capabilities/bindings"
)

// echoServer answers with the request's method, query and body as JSON.
func echoServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"method": r.Method, "query": r.URL.Query(),
			"content_type": r.Header.Get("Content-Type"), "body": string(body),
		})
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestRunner_HTTPLoopbackRefusedByDefault(t *testing.T) {
	srv := echoServer(t)
	r := newRunner(t, bindings.Config{})
	for _, typ := range []string{acp.BindHTTPGet, acp.BindHTTPPost} {
		_, err := call(t, r, acp.Binding{Type: typ, URL: srv.URL}, `{}`)
		ce := wantCode(t, err, capabilities.CodePermissionDenied)
		if !strings.Contains(ce.Message, "127.0.0.1") || !strings.Contains(ce.Message, "loopback") {
			t.Errorf("%s: message %q does not say which address and why", typ, ce.Message)
		}
	}
}

func TestRunner_HTTPGetQueryMapping(t *testing.T) {
	srv := echoServer(t)
	r := newRunner(t, bindings.Config{AllowPrivate: true})
	out, err := call(t, r, acp.Binding{Type: acp.BindHTTPGet, URL: srv.URL + "/w?fixed=1"},
		`{"location":"Paris, FR","days":3,"metric":true,"skip":null,"ids":[1,"b"],"filter":{"a":[1,2]}}`)
	if err != nil {
		t.Fatal(err)
	}
	mustJSON(t, out, `{"method":"GET","content_type":"","body":"","query":{
		"fixed":["1"],"location":["Paris, FR"],"days":["3"],"metric":["true"],
		"ids":["1","b"],"filter":["{\"a\":[1,2]}"]}}`)
}

func TestRunner_HTTPPostJSONBody(t *testing.T) {
	srv := echoServer(t)
	r := newRunner(t, bindings.Config{AllowHosts: []string{"127.0.0.0/8"}})
	out, err := call(t, r, acp.Binding{Type: acp.BindHTTPPost, URL: srv.URL}, `{"message":"hi","n":[1,2]}`)
	if err != nil {
		t.Fatal(err)
	}
	mustJSON(t, out, `{"method":"POST","content_type":"application/json","query":{},"body":"{\"message\":\"hi\",\"n\":[1,2]}"}`)
}

func TestRunner_HTTPAllowHostsByName(t *testing.T) {
	srv := echoServer(t)
	url := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
	r := newRunner(t, bindings.Config{AllowHosts: []string{"LOCALHOST"}})
	if _, err := call(t, r, acp.Binding{Type: acp.BindHTTPGet, URL: url}, `{}`); err != nil {
		t.Fatalf("allowed host name refused: %v", err)
	}
	_, err := call(t, r, acp.Binding{Type: acp.BindHTTPGet, URL: srv.URL}, `{}`)
	wantCode(t, err, capabilities.CodePermissionDenied) // the same server by IP is not allowed
}

func TestRunner_HTTPRedirectToLoopbackRefused(t *testing.T) {
	inner := echoServer(t)
	outer := httptest.NewServer(http.RedirectHandler(inner.URL+"/secret", http.StatusFound))
	t.Cleanup(outer.Close)
	// The first hop is allowed by name; the redirect goes to 127.0.0.1.
	r := newRunner(t, bindings.Config{AllowHosts: []string{"localhost"}})
	_, err := call(t, r, acp.Binding{Type: acp.BindHTTPGet, URL: strings.Replace(outer.URL, "127.0.0.1", "localhost", 1)}, `{}`)
	wantCode(t, err, capabilities.CodePermissionDenied)
}

func TestRunner_HTTPSchemeRefused(t *testing.T) {
	r := newRunner(t, bindings.Config{AllowPrivate: true})
	for _, u := range []string{"file:///etc/passwd", "gopher://example.com/", "ftp://example.com/x"} {
		_, err := call(t, r, acp.Binding{Type: acp.BindHTTPGet, URL: u}, `{}`)
		wantCode(t, err, capabilities.CodePermissionDenied)
	}
	srv := httptest.NewServer(http.RedirectHandler("file:///etc/passwd", http.StatusFound))
	t.Cleanup(srv.Close)
	_, err := call(t, r, acp.Binding{Type: acp.BindHTTPGet, URL: srv.URL}, `{}`)
	wantCode(t, err, capabilities.CodePermissionDenied)
}

func TestRunner_HTTPResponses(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/text":
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			io.WriteString(w, "sunny")
		case "/missing":
			http.Error(w, "nope", http.StatusNotFound)
		case "/big":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `"`+strings.Repeat("x", 2048)+`"`)
		case "/badjson":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"truncated":`)
		}
	}))
	t.Cleanup(srv.Close)
	r := newRunner(t, bindings.Config{AllowPrivate: true, MaxResponseBytes: 1024})
	get := acp.Binding{Type: acp.BindHTTPGet}

	get.URL = srv.URL + "/text"
	out, err := call(t, r, get, `{}`)
	if err != nil {
		t.Fatal(err)
	}
	mustJSON(t, out, `{"status":200,"content_type":"text/plain; charset=utf-8","body":"sunny"}`)

	get.URL = srv.URL + "/badjson"
	out, err = call(t, r, get, `{}`)
	if err != nil {
		t.Fatal(err)
	}
	mustJSON(t, out, `{"status":200,"content_type":"application/json","body":"{\"truncated\":"}`)

	get.URL = srv.URL + "/missing"
	_, err = call(t, r, get, `{}`)
	if ce := wantCode(t, err, capabilities.CodeExecutionFailed); !strings.Contains(ce.Message, "404") {
		t.Errorf("message %q does not carry the status", ce.Message)
	}

	get.URL = srv.URL + "/big"
	_, err = call(t, r, get, `{}`)
	if ce := wantCode(t, err, capabilities.CodeExecutionFailed); !strings.Contains(ce.Message, "1024 bytes") {
		t.Errorf("message %q does not name the cap", ce.Message)
	}
}

func TestRunner_HTTPTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(func() { close(release); srv.Close() })
	r := newRunner(t, bindings.Config{AllowPrivate: true, HTTPTimeout: 50 * time.Millisecond})
	_, err := call(t, r, acp.Binding{Type: acp.BindHTTPGet, URL: srv.URL}, `{}`)
	wantCode(t, err, capabilities.CodeTimeout)
}

func TestRunner_HTTPBadInput(t *testing.T) {
	r := newRunner(t, bindings.Config{AllowPrivate: true})
	_, err := call(t, r, acp.Binding{Type: acp.BindHTTPGet, URL: "http://127.0.0.1:1/"}, `[1,2]`)
	wantCode(t, err, capabilities.CodeInvalidInput)
	_, err = call(t, r, acp.Binding{Type: acp.BindHTTPPost, URL: "/relative"}, `{}`)
	wantCode(t, err, capabilities.CodeInvalidInput)
	_, err = call(t, r, acp.Binding{Type: "smtp"}, `{}`)
	wantCode(t, err, capabilities.CodeInvalidInput)
}
