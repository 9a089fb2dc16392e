package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestDoSendsTheMediaTypeOfItsBody: the API refuses a JSON body without Content-Type
// application/json (415), so every JSON body the client sends says so; a module's bytes say
// application/wasm, and a request without a body says nothing.
func TestDoSendsTheMediaTypeOfItsBody(t *testing.T) {
	t.Parallel()
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Get("Content-Type"))
		_, _ = w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	c := &Client{BaseURL: srv.URL, Token: "t", HTTP: srv.Client()}
	for _, body := range []any{map[string]any{"input": 1}, json.RawMessage(`{"a":1}`), struct{}{}, []byte("\x00asm"), nil} {
		if _, err := c.Do(context.Background(), "POST", "/v1/x", body); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"application/json", "application/json", "application/json", "application/wasm", ""}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("body %d was sent with Content-Type %q, want %q", i, got[i], want[i])
		}
	}
}

// TestErrorSaysItsCodeOnce: the server's messages wrap its sentinel errors, so the code's
// words are often in the message too; Error says them once, wherever they were.
func TestErrorSaysItsCodeOnce(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		code, message, want string
	}{
		{"conflict", "conflict: workflow w version 1 is bound to module abc", "conflict (HTTP 409): workflow w version 1 is bound to module abc"},
		{"conflict", "create tenant acme: conflict: it exists", "conflict (HTTP 409): create tenant acme: it exists"},
		{"not_found", "run r1 of workflow w: not found", "not_found (HTTP 409): run r1 of workflow w"},
		{"invalid_request", "invalid request: input is not JSON", "invalid_request (HTTP 409): input is not JSON"},
		{"unauthorized", "the bearer token is unknown or revoked", "unauthorized (HTTP 409): the bearer token is unknown or revoked"},
		{"conflict", "conflict", "conflict (HTTP 409): conflict"}, // nothing else to say
	} {
		e := &Error{Status: 409, Code: c.code, Message: c.message}
		if got := e.Error(); got != c.want {
			t.Errorf("%q: %q, want %q", c.message, got, c.want)
		}
	}
}
