package main

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

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

// TestEveryCommandHasHelp walks the command tree, so a new command is covered without an entry
// here: each answers --help with its own page and has a usage line, and each leaf an action.
func TestEveryCommandHasHelp(t *testing.T) {
	// Not parallel: urfave/cli writes package-level flags on every run.
	help := func(path []string) {
		app := newApp()
		var out bytes.Buffer
		app.Writer = &out
		if err := app.Run(append(append([]string{}, path...), "--help")); err != nil {
			t.Errorf("%v --help: %v", path, err)
		}
		if !strings.Contains(out.String(), strings.Join(path, " ")) {
			t.Errorf("%v --help printed %q", path, out.String())
		}
	}
	var walk func(path []string, cmds []*cli.Command)
	walk = func(path []string, cmds []*cli.Command) {
		for _, cmd := range cmds {
			if cmd.Name == "help" {
				continue
			}
			p := append(append([]string{}, path...), cmd.Name)
			if cmd.Usage == "" {
				t.Errorf("%v has no usage line", p)
			}
			help(p)
			if len(cmd.Subcommands) > 0 {
				walk(p, cmd.Subcommands)
			} else if cmd.Action == nil {
				t.Errorf("%v has no action", p)
			}
		}
	}
	help([]string{"wfhost"})
	walk([]string{"wfhost"}, newApp().Commands)
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
	err = newApp().Run([]string{"wfhost", "runs", "get", "--url", srv.URL, "--token", "t", "x", "id"})
	if err == nil || !strings.Contains(err.Error(), "not_found") {
		t.Fatalf("CLI error %v", err)
	}
}
