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
