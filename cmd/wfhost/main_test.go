package main

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/wfhost/wfhost/api/client"
)

func TestFlagsMayFollowArguments(t *testing.T) {
	t.Parallel()
	app := newApp()
	cases := []struct{ in, want string }{
		{"wfhost start steps --input {} --wait", "wfhost start --input {} --wait steps"},
		{"wfhost start --input {} steps", "wfhost start --input {} steps"},
		{"wfhost runs get wf id --json --url=http://x", "wfhost runs get --json --url=http://x wf id"},
		{"wfhost signal wf id ev --payload {\"a\":1}", "wfhost signal --payload {\"a\":1} wf id ev"},
		{"wfhost start steps -- --not-a-flag", "wfhost start steps -- --not-a-flag"},
		{"wfhost --help", "wfhost --help"},
		{"wfhost unknown --x y", "wfhost unknown --x y"},
	}
	for _, c := range cases {
		got := strings.Join(flagsFirst(app, strings.Fields(c.in)), " ")
		if got != c.want {
			t.Errorf("%q became %q, want %q", c.in, got, c.want)
		}
	}
}

func TestEveryCommandHasHelp(t *testing.T) {
	// Not parallel: urfave/cli writes package-level flags on every run.
	for _, args := range [][]string{
		{"wfhost", "--help"}, {"wfhost", "run", "--help"}, {"wfhost", "migrate", "--help"},
		{"wfhost", "deploy", "--help"}, {"wfhost", "start", "--help"}, {"wfhost", "runs", "get", "--help"},
		{"wfhost", "runs", "steps", "--help"}, {"wfhost", "signal", "--help"}, {"wfhost", "events", "send", "--help"},
	} {
		if err := newApp().Run(args); err != nil {
			t.Errorf("%v: %v", args, err)
		}
	}
}

func TestClientCommandsRejectBadInputBeforeCallingTheServer(t *testing.T) {
	// Not parallel: urfave/cli writes package-level flags on every run.
	called := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { called = true }))
	defer srv.Close()
	for _, args := range [][]string{
		{"wfhost", "start", "--url", srv.URL, "--input", "{nope", "steps"},
		{"wfhost", "start", "--url", srv.URL},
		{"wfhost", "signal", "--url", srv.URL, "--payload", "[", "wf", "id", "ev"},
		{"wfhost", "runs", "get", "--url", srv.URL, "only-one-arg"},
		{"wfhost", "deploy", "--url", srv.URL, "/no/such/file.wasm"},
	} {
		if err := newApp().Run(args); err == nil {
			t.Errorf("%v succeeded", args)
		}
	}
	if called {
		t.Fatal("a bad command reached the server")
	}
}

func TestClientReportsTheServersError(t *testing.T) {
	// Not parallel: urfave/cli writes package-level flags on every run.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"error":{"code":"not_found","message":"workflow \"x\": not found"}}`))
	}))
	defer srv.Close()
	_, err := (&client.Client{BaseURL: srv.URL}).Do(context.Background(), "GET", "/v1/workflows/x/runs", nil)
	var apiErr *client.Error
	if !errors.As(err, &apiErr) || apiErr.Status != 404 || apiErr.Code != "not_found" || !strings.Contains(err.Error(), `workflow "x"`) {
		t.Fatalf("error %v", err)
	}
	err = newApp().Run([]string{"wfhost", "runs", "get", "--url", srv.URL, "x", "id"})
	if err == nil || !strings.Contains(err.Error(), "not_found") {
		t.Fatalf("CLI error %v", err)
	}
}
