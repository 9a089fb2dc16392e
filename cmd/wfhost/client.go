package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/wfhost/wfhost/api/client"
)

func clientFlags(extra ...cli.Flag) []cli.Flag {
	return append([]cli.Flag{
		&cli.StringFlag{Name: "url", Value: "http://127.0.0.1:8080", EnvVars: []string{"WFHOST_URL"}, Usage: "the daemon's API address"},
		&cli.StringFlag{Name: "token", EnvVars: []string{"WFHOST_TOKEN"}, Usage: "bearer token (default: the one a local daemon keeps in --data-dir/token)"},
		&cli.StringFlag{Name: "data-dir", Value: defaultDataDir(), EnvVars: []string{"WFHOST_DATA_DIR"}, Usage: "a local daemon's data directory, where the default token is read from"},
		&cli.BoolFlag{Name: "json", EnvVars: []string{"WFHOST_JSON"}, Usage: "print the raw JSON response"},
	}, extra...)
}

func apiClient(c *cli.Context) *client.Client {
	token := c.String("token")
	if token == "" {
		if b, err := os.ReadFile(tokenFile(c.String("data-dir"))); err == nil {
			token = strings.TrimSpace(string(b))
		}
	}
	return &client.Client{BaseURL: c.String("url"), Token: token}
}

// args returns exactly n positional arguments or a usage error naming them.
func args(c *cli.Context, names ...string) ([]string, error) {
	if c.NArg() != len(names) {
		return nil, fmt.Errorf("%s needs %d argument(s): %s", c.Command.FullName(), len(names), strings.Join(names, " "))
	}
	return c.Args().Slice(), nil
}

// jsonFlag parses a flag that holds JSON, so a typo fails here and not as a server error.
func jsonFlag(c *cli.Context, name string) (json.RawMessage, error) {
	s := c.String(name)
	if s == "" {
		return nil, nil
	}
	if !json.Valid([]byte(s)) {
		return nil, fmt.Errorf("--%s is not valid JSON: %s", name, s)
	}
	return json.RawMessage(s), nil
}

func printJSON(raw json.RawMessage) {
	var v any
	_ = json.Unmarshal(raw, &v)
	b, _ := json.MarshalIndent(v, "", "  ")
	fmt.Println(string(b))
}

type run struct {
	ID          string          `json:"id"`
	Workflow    string          `json:"workflow"`
	Version     string          `json:"version"`
	Status      string          `json:"status"`
	Output      json.RawMessage `json:"output"`
	Error       *runError       `json:"error"`
	CreatedAt   time.Time       `json:"createdAt"`
	CompletedAt *time.Time      `json:"completedAt"`
}

type runError struct{ Code, Message string }

func printRun(r run) {
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "run\t%s\nworkflow\t%s@%s\nstatus\t%s\ncreated\t%s\n", r.ID, r.Workflow, r.Version, r.Status, r.CreatedAt.Format(time.RFC3339))
	if r.CompletedAt != nil {
		fmt.Fprintf(w, "completed\t%s\n", r.CompletedAt.Format(time.RFC3339))
	}
	if len(r.Output) > 0 {
		fmt.Fprintf(w, "output\t%s\n", r.Output)
	}
	if r.Error != nil {
		fmt.Fprintf(w, "error\t%s: %s\n", r.Error.Code, r.Error.Message)
	}
	w.Flush()
}

func deployCommand() *cli.Command {
	return &cli.Command{
		Name: "deploy", Usage: "upload a workflow module", ArgsUsage: "FILE.wasm",
		Flags: clientFlags(&cli.BoolFlag{Name: "replace", Usage: "rebind workflow versions already bound to another module (a hotfix)"}),
		Action: func(c *cli.Context) error {
			a, err := args(c, "FILE.wasm")
			if err != nil {
				return err
			}
			wasm, err := os.ReadFile(a[0])
			if err != nil {
				return err
			}
			path := "/v1/modules"
			if c.Bool("replace") {
				path += "?replace=true"
			}
			raw, err := apiClient(c).Do(c.Context, "POST", path, wasm)
			if err != nil {
				return err
			}
			if c.Bool("json") {
				printJSON(raw)
				return nil
			}
			var res struct {
				Digest    string `json:"digest"`
				Workflows []struct{ Name, Version string }
			}
			_ = json.Unmarshal(raw, &res)
			fmt.Printf("module %s\n", res.Digest)
			for _, w := range res.Workflows {
				fmt.Printf("  workflow %s version %s\n", w.Name, w.Version)
			}
			return nil
		},
	}
}

func startCommand() *cli.Command {
	return &cli.Command{
		Name: "start", Usage: "start a run of a workflow", ArgsUsage: "WORKFLOW",
		Flags: clientFlags(
			&cli.StringFlag{Name: "input", Usage: "the run's input, JSON"},
			&cli.StringFlag{Name: "version", Usage: "workflow version (default: the latest)"},
			&cli.StringFlag{Name: "idempotency-key", Usage: "start at most one run per key"},
			&cli.BoolFlag{Name: "wait", Usage: "wait for the run to finish and print its output"},
			&cli.DurationFlag{Name: "timeout", Value: 10 * time.Minute, Usage: "how long --wait waits"},
		),
		Action: func(c *cli.Context) error {
			a, err := args(c, "WORKFLOW")
			if err != nil {
				return err
			}
			input, err := jsonFlag(c, "input")
			if err != nil {
				return err
			}
			cl := apiClient(c)
			raw, err := cl.Do(c.Context, "POST", "/v1/workflows/"+url.PathEscape(a[0])+"/runs", map[string]any{
				"input": input, "version": c.String("version"), "idempotencyKey": c.String("idempotency-key"),
			})
			if err != nil {
				return err
			}
			var r run
			if err := json.Unmarshal(raw, &r); err != nil {
				return err
			}
			if c.Bool("wait") {
				if raw, err = waitForRun(c.Context, cl, r.Workflow, r.ID, c.Duration("timeout")); err != nil {
					return err
				}
				_ = json.Unmarshal(raw, &r)
			}
			if c.Bool("json") {
				printJSON(raw)
			} else {
				printRun(r)
			}
			if c.Bool("wait") && r.Status != "completed" {
				return fmt.Errorf("run %s ended %s", r.ID, r.Status)
			}
			return nil
		},
	}
}

// waitForRun polls the run, backing off to a second between polls, until it is final.
func waitForRun(ctx context.Context, cl *client.Client, workflow, id string, timeout time.Duration) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	delay := 20 * time.Millisecond
	for {
		raw, err := cl.Do(ctx, "GET", client.RunPath(workflow, id), nil)
		if err != nil {
			return nil, err
		}
		var r run
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, err
		}
		switch r.Status {
		case "completed", "failed", "cancelled", "nondeterministic":
			return raw, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("run %s is still %s after %v", id, r.Status, timeout)
		case <-time.After(delay):
		}
		delay = min(delay*2, time.Second)
	}
}

func runsCommand() *cli.Command {
	return &cli.Command{
		Name: "runs", Usage: "inspect and cancel runs",
		Subcommands: []*cli.Command{
			{
				Name: "get", Usage: "show a run", ArgsUsage: "WORKFLOW RUN_ID", Flags: clientFlags(),
				Action: func(c *cli.Context) error {
					a, err := args(c, "WORKFLOW", "RUN_ID")
					if err != nil {
						return err
					}
					return showRun(c, "GET", client.RunPath(a[0], a[1]))
				},
			},
			{
				Name: "cancel", Usage: "cancel a run", ArgsUsage: "WORKFLOW RUN_ID", Flags: clientFlags(),
				Action: func(c *cli.Context) error {
					a, err := args(c, "WORKFLOW", "RUN_ID")
					if err != nil {
						return err
					}
					return showRun(c, "DELETE", client.RunPath(a[0], a[1]))
				},
			},
			{
				Name: "steps", Usage: "show a run's journal", ArgsUsage: "WORKFLOW RUN_ID", Flags: clientFlags(),
				Action: func(c *cli.Context) error {
					a, err := args(c, "WORKFLOW", "RUN_ID")
					if err != nil {
						return err
					}
					raw, err := apiClient(c).Do(c.Context, "GET", client.RunPath(a[0], a[1])+"/steps", nil)
					if err != nil || c.Bool("json") {
						if err == nil {
							printJSON(raw)
						}
						return err
					}
					var res struct {
						Steps []struct {
							Seq               int
							Key, Kind, Status string
							Attempt           int
							Output            json.RawMessage
							Error             *runError
							DurationMs        *float64
						}
					}
					if err := json.Unmarshal(raw, &res); err != nil {
						return err
					}
					w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
					fmt.Fprintln(w, "SEQ\tKEY\tKIND\tSTATUS\tATTEMPT\tMS\tRESULT")
					for _, s := range res.Steps {
						result := string(s.Output)
						if s.Error != nil {
							result = s.Error.Code + ": " + s.Error.Message
						}
						ms := ""
						if s.DurationMs != nil {
							ms = fmt.Sprintf("%.1f", *s.DurationMs)
						}
						fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%d\t%s\t%s\n", s.Seq, s.Key, s.Kind, s.Status, s.Attempt, ms, truncate(result, 80))
					}
					return w.Flush()
				},
			},
			{
				Name: "list", Usage: "list a workflow's runs, newest first", ArgsUsage: "WORKFLOW",
				Flags: clientFlags(
					&cli.StringFlag{Name: "status", Usage: "only runs in this status"},
					&cli.IntFlag{Name: "limit", Value: 50, Usage: "runs per page"},
					&cli.StringFlag{Name: "cursor", Usage: "the page after this cursor"},
				),
				Action: func(c *cli.Context) error {
					a, err := args(c, "WORKFLOW")
					if err != nil {
						return err
					}
					q := url.Values{}
					for _, f := range []string{"status", "cursor"} {
						if v := c.String(f); v != "" {
							q.Set(f, v)
						}
					}
					q.Set("limit", fmt.Sprint(c.Int("limit")))
					raw, err := apiClient(c).Do(c.Context, "GET", "/v1/workflows/"+url.PathEscape(a[0])+"/runs?"+q.Encode(), nil)
					if err != nil || c.Bool("json") {
						if err == nil {
							printJSON(raw)
						}
						return err
					}
					var res struct {
						Runs       []run
						NextCursor string
					}
					if err := json.Unmarshal(raw, &res); err != nil {
						return err
					}
					w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
					fmt.Fprintln(w, "ID\tVERSION\tSTATUS\tCREATED")
					for _, r := range res.Runs {
						fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", r.ID, r.Version, r.Status, r.CreatedAt.Format(time.RFC3339))
					}
					w.Flush()
					if res.NextCursor != "" {
						fmt.Println("next page: --cursor", res.NextCursor)
					}
					return nil
				},
			},
		},
	}
}

func showRun(c *cli.Context, method, path string) error {
	raw, err := apiClient(c).Do(c.Context, method, path, nil)
	if err != nil {
		return err
	}
	if c.Bool("json") {
		printJSON(raw)
		return nil
	}
	var r run
	if err := json.Unmarshal(raw, &r); err != nil {
		return err
	}
	printRun(r)
	return nil
}

func signalCommand() *cli.Command {
	return &cli.Command{
		Name: "signal", Usage: "send an event to one run", ArgsUsage: "WORKFLOW RUN_ID EVENT",
		Flags: clientFlags(&cli.StringFlag{Name: "payload", Usage: "the event's JSON payload"}),
		Action: func(c *cli.Context) error {
			a, err := args(c, "WORKFLOW", "RUN_ID", "EVENT")
			if err != nil {
				return err
			}
			return sendEvent(c, client.RunPath(a[0], a[1])+"/signals/"+url.PathEscape(a[2]))
		},
	}
}

func eventsCommand() *cli.Command {
	return &cli.Command{
		Name: "events", Usage: "broadcast events",
		Subcommands: []*cli.Command{{
			Name: "send", Usage: "broadcast an event to every waiting run", ArgsUsage: "EVENT",
			Flags: clientFlags(&cli.StringFlag{Name: "payload", Usage: "the event's JSON payload"}),
			Action: func(c *cli.Context) error {
				a, err := args(c, "EVENT")
				if err != nil {
					return err
				}
				return sendEvent(c, "/v1/events/"+url.PathEscape(a[0]))
			},
		}},
	}
}

func sendEvent(c *cli.Context, path string) error {
	payload, err := jsonFlag(c, "payload")
	if err != nil {
		return err
	}
	var body any
	if payload != nil {
		body = payload
	}
	raw, err := apiClient(c).Do(c.Context, "POST", path, body)
	if err != nil {
		var apiErr *client.Error
		if errors.As(err, &apiErr) {
			return apiErr
		}
		return err
	}
	printJSON(raw)
	return nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}
