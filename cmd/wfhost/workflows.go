package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/api"
	"github.com/wfhost/wfhost/api/client"
	"github.com/wfhost/wfhost/api/wire"
)

// The tenant's commands: modules, workflows, runs and events.

func deployCommand() *cli.Command {
	return &cli.Command{
		Name: "deploy", Usage: "upload a workflow module", ArgsUsage: "FILE.wasm",
		Flags: clientFlags(&cli.BoolFlag{Name: "replace", EnvVars: []string{"WFHOST_REPLACE"}, Usage: "rebind workflow versions already bound to another module (a hotfix)"}, upgradeFlag()),
		Action: func(c *cli.Context) error {
			a, err := args(c, "FILE.wasm")
			if err != nil {
				return err
			}
			wasm, err := os.ReadFile(a[0])
			if err != nil {
				return usagef("%v", err)
			}
			cl, err := tenantClient(c)
			if err != nil {
				return err
			}
			upgrade, err := upgradeQuery(c)
			if err != nil {
				return err
			}
			var query []string
			if c.Bool("replace") {
				query = append(query, "replace=true")
			}
			if upgrade != "" {
				query = append(query, upgrade)
			}
			path := "/v1/modules"
			if len(query) > 0 {
				path += "?" + strings.Join(query, "&")
			}
			raw, err := cl.Do(c.Context, "POST", path, wasm)
			if err != nil {
				return upgradeRefused(deployError(err, a[0]))
			}
			return render(c, raw, func(w *tabwriter.Writer, d wire.Deployed) {
				fmt.Fprintf(w, "module %s (%s)\n\n", d.Digest, byteSize(d.Size))
				fmt.Fprintln(w, "WORKFLOW\tVERSION\tTRIGGERS")
				for _, wf := range d.Workflows {
					fmt.Fprintf(w, "%s\t%s\t%s\n", wf.Name, wf.Version, orDash(strings.Join(wf.Triggers, ", ")))
				}
				if d.Upgrade != nil {
					printUpgradeSummary(w, d.Upgrade)
				}
			})
		},
	}
}

// deployError words a refused deploy for the CLI: the server's hint names its query
// parameter ("deploy with replace"), which here is the --replace flag.
func deployError(err error, file string) error {
	var apiErr *client.Error
	if !errors.As(err, &apiErr) || apiErr.Status != http.StatusConflict || apiErr.Code == "upgrade_refused" {
		return err
	}
	msg := apiErr.Message
	if _, after, ok := strings.Cut(msg, "conflict: "); ok {
		msg = after // past the server's own context ("deploy: put module: ")
	}
	msg, _, _ = strings.Cut(msg, "; deploy with replace")
	e := *apiErr
	e.Message = msg + "; to rebind it to this module (a hotfix), run: wfhost deploy --replace " + file
	return &e
}

func modulesCommand() *cli.Command {
	return &cli.Command{
		Name: "modules", Usage: "the tenant's deployed modules",
		Subcommands: []*cli.Command{{
			Name: "list", Usage: "list deployed modules", Flags: clientFlags(),
			Action: func(c *cli.Context) error {
				if _, err := args(c); err != nil {
					return err
				}
				raw, err := get(c, "/v1/modules")
				if err != nil {
					return err
				}
				return render(c, raw, func(w *tabwriter.Writer, ms wire.ModulePage) {
					fmt.Fprintln(w, "DIGEST\tSIZE\tABI\tDEPLOYED")
					for _, m := range ms.Modules {
						fmt.Fprintf(w, "%s\t%s\t%d\t%s\n", m.Digest, byteSize(m.Size), m.ABIVersion, timeText(m.CreatedAt))
					}
				})
			},
		}},
	}
}

// runStatuses are the run statuses in the order tables show them: the run's life, then its
// ends.
func runStatuses() []string {
	var out []string
	for _, s := range wire.RunStatuses() {
		out = append(out, string(s))
	}
	return out
}

func workflowsCommand() *cli.Command {
	return &cli.Command{
		Name: "workflows", Usage: "the tenant's workflows",
		Subcommands: []*cli.Command{{
			Name: "list", Usage: "list workflows with their versions and run counts by status", Flags: clientFlags(),
			Action: func(c *cli.Context) error {
				if _, err := args(c); err != nil {
					return err
				}
				raw, err := get(c, "/v1/workflows")
				if err != nil {
					return err
				}
				return render(c, raw, func(w *tabwriter.Writer, wfs wire.WorkflowPage) {
					fmt.Fprintln(w, "NAME\tLATEST\tVERSIONS\tRUNS\tBY STATUS\tPAUSED")
					for _, wf := range wfs.Workflows {
						total, byStatus := 0, []string{}
						seen := map[string]bool{}
						// Known statuses in life order, then any the server adds later.
						for _, s := range append(runStatuses(), sortedKeys(wf.RunCounts)...) {
							if n := wf.RunCounts[s]; n > 0 && !seen[s] {
								seen[s] = true
								total += n
								byStatus = append(byStatus, fmt.Sprintf("%s=%d", s, n))
							}
						}
						fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%s\t%s\n", wf.Name, wf.LatestVersion, strings.Join(wf.Versions, ","), total,
							orDash(strings.Join(byStatus, " ")), pausedText(wf))
					}
				})
			},
		}, workflowPauseCommand(true), workflowPauseCommand(false)},
	}
}

// get calls a tenant route with GET.
func get(c *cli.Context, path string) (json.RawMessage, error) {
	cl, err := tenantClient(c)
	if err != nil {
		return nil, err
	}
	return cl.Do(c.Context, "GET", path, nil)
}

func workflowPath(name string) string { return "/v1/workflows/" + url.PathEscape(name) }

func startCommand() *cli.Command {
	return &cli.Command{
		Name: "start", Usage: "start a run of a workflow", ArgsUsage: "WORKFLOW",
		Flags: clientFlags(append(retryFlags(),
			&cli.StringFlag{Name: "input", EnvVars: []string{"WFHOST_INPUT"}, Usage: "the run's input: JSON, @FILE to read it from a file, or - from stdin"},
			&cli.StringFlag{Name: "version", EnvVars: []string{"WFHOST_WORKFLOW_VERSION"}, Usage: "workflow version (default: the latest)"},
			&cli.StringFlag{Name: "idempotency-key", EnvVars: []string{"WFHOST_IDEMPOTENCY_KEY"}, Usage: "start at most one run per key; a repeated start returns the first run"},
			&cli.IntFlag{Name: "retention-days", EnvVars: []string{"WFHOST_RETENTION_DAYS"}, Usage: "keep the finished run this many days (default: the workflow's, else the daemon's)"},
			&cli.IntFlag{Name: "priority", EnvVars: []string{"WFHOST_PRIORITY"},
				Usage: fmt.Sprintf("the run's priority in seconds (%d to %d): claimed as if started that much earlier, later when negative (default: the workflow's flow default, else 0)", abi.MinPriority, abi.MaxPriority)},
			timeoutFlag(),
			&cli.BoolFlag{Name: "wait", EnvVars: []string{"WFHOST_WAIT"}, Usage: "wait for the run to end, print it, and fail unless it completed; a run that continues as new or is retried is followed to the run that ends its chain"},
			&cli.DurationFlag{Name: "timeout", Value: 10 * time.Minute, EnvVars: []string{"WFHOST_WAIT_TIMEOUT"}, Usage: "how long --wait waits"},
		)...),
		Action: func(c *cli.Context) error {
			a, err := args(c, "WORKFLOW")
			if err != nil {
				return err
			}
			start, err := startFlags(c)
			if err != nil {
				return err
			}
			if c.Bool("wait") && c.Duration("timeout") <= 0 {
				return usagef("--timeout must be positive: %v", c.Duration("timeout"))
			}
			cl, err := tenantClient(c)
			if err != nil {
				return err
			}
			start.IdempotencyKey = c.String("idempotency-key")
			if c.IsSet("priority") {
				p := c.Int("priority")
				if err := abi.CheckPriority("--priority", p); err != nil {
					return usagef("%v", err)
				}
				start.Priority = &p
			}
			body := start
			path := workflowPath(a[0]) + "/runs"
			if c.Bool("wait") {
				// Start and await in one request (the server answers when the run has ended or
				// the wait is over); a longer or chained run is awaited below.
				if secs := min(int(c.Duration("timeout").Seconds()), int(api.MaxRunWait.Seconds())); secs >= 1 {
					path += "?wait=" + strconv.Itoa(secs)
				}
			}
			raw, err := cl.Do(c.Context, "POST", path, body)
			if err != nil {
				return err
			}
			var r wire.Run
			if err := json.Unmarshal(raw, &r); err != nil {
				return fmt.Errorf("decoding the server's response: %w", err)
			}
			if c.Bool("wait") && (!r.Status.Ended() || r.ContinuedAs != "") {
				if raw, err = waitForChain(c, cl, r, c.Duration("timeout")); err != nil {
					return err
				}
				r = wire.Run{}
				if err := json.Unmarshal(raw, &r); err != nil {
					return fmt.Errorf("decoding the server's response: %w", err)
				}
			}
			if err := render(c, raw, func(w *tabwriter.Writer, r wire.Run) { printRun(w, r) }); err != nil {
				return err
			}
			if c.Bool("wait") && r.Status != wire.RunCompleted {
				// The run's error, a stack often, is in what was just printed: the command's
				// error names its code only, so the stack shows once.
				e := &runEndedError{id: r.ID, status: string(r.Status)}
				if r.Error != nil {
					e.code = r.Error.Code
				}
				return e
			}
			return nil
		},
	}
}

// waitForChain awaits the end of the run r starts: r's, or, when r continues as new or is
// retried, that of the run that ends its chain (as Temporal's CLI follows a continue-as-new),
// saying on stderr which run went on as which. timeout bounds the whole wait.
func waitForChain(c *cli.Context, cl *client.Client, r wire.Run, timeout time.Duration) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(c.Context, timeout)
	defer cancel()
	for {
		raw, err := waitForRun(ctx, cl, r.Workflow, r.ID, timeout)
		if err != nil {
			return nil, err
		}
		r = wire.Run{} // a field the answer leaves out must not keep the last run's value
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, fmt.Errorf("decoding the server's response: %w", err)
		}
		if r.ContinuedAs == "" {
			return raw, nil
		}
		fmt.Fprintf(c.App.ErrWriter, "run %s %s; continued as %s\n", r.ID, r.Status, r.ContinuedAs)
		r.ID = r.ContinuedAs
	}
}

// waitForRun awaits the run's end with long polls (GET ...?wait=N: the server answers when the
// run has ended or N seconds have passed), so a run is one request where it was a poll every
// 20 ms to a second; under a second of timeout left, it polls.
func waitForRun(ctx context.Context, cl *client.Client, workflow, id string, timeout time.Duration) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	delay := 20 * time.Millisecond
	for {
		path := client.RunPath(workflow, id)
		if dl, ok := ctx.Deadline(); ok {
			if secs := min(int(time.Until(dl).Seconds()), int(api.MaxRunWait.Seconds())); secs >= 1 {
				path += "?wait=" + strconv.Itoa(secs)
			}
		}
		raw, err := cl.Do(ctx, "GET", path, nil)
		if ctx.Err() != nil {
			return nil, &waitTimeoutError{fmt.Sprintf("run %s had not ended after %v", id, timeout)}
		}
		if err != nil {
			return nil, err
		}
		var r wire.Run
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, fmt.Errorf("decoding the server's response: %w", err)
		}
		if r.Status.Ended() {
			return raw, nil
		}
		select {
		case <-ctx.Done():
			return nil, &waitTimeoutError{fmt.Sprintf("run %s is still %s after %v", id, r.Status, timeout)}
		case <-time.After(delay):
		}
		delay = min(delay*2, time.Second)
	}
}

func runsCommand() *cli.Command {
	runArgs := "WORKFLOW RUN_ID"
	return &cli.Command{
		Name: "runs", Usage: "list, inspect, pause, resume and cancel runs",
		Subcommands: []*cli.Command{
			runsListCommand(),
			{
				Name: "get", Usage: "show a run", ArgsUsage: runArgs, Flags: clientFlags(),
				Action: func(c *cli.Context) error {
					a, err := args(c, "WORKFLOW", "RUN_ID")
					if err != nil {
						return err
					}
					return showRun(c, "GET", client.RunPath(a[0], a[1]))
				},
			},
			{
				Name: "steps", Usage: "show a run's journal: steps, sleeps and waits with timings and attempts", ArgsUsage: runArgs, Flags: clientFlags(),
				Action: runSteps,
			},
			runsLogCommand(),
			runsLogsCommand(),
			runsExportCommand(),
			runsPauseCommand(),
			runsResumeCommand(),
			{
				Name: "cancel", ArgsUsage: runArgs,
				Usage: "ask a run to cancel itself: its workflow is told at its next durable call and may compensate for --grace, then it is terminated (a module that does not handle a cancel is terminated now)",
				Flags: clientFlags(
					&cli.DurationFlag{Name: "grace", EnvVars: []string{"WFHOST_CANCEL_GRACE"}, Usage: "how long the workflow may compensate (default: the daemon's, 1m)"},
					&cli.BoolFlag{Name: "wait", EnvVars: []string{"WFHOST_WAIT"}, Usage: "wait for the run to end and print it"},
					&cli.DurationFlag{Name: "timeout", Value: 10 * time.Minute, EnvVars: []string{"WFHOST_WAIT_TIMEOUT"}, Usage: "how long --wait waits"},
				),
				Action: cancelRun,
			},
			runsQueryCommand(),
			{
				Name: "restart", ArgsUsage: runArgs,
				Usage: "run an ended run again as a new run linked to it: from scratch, or --from-step KEY with the journal before it kept (replayed, not run)",
				Flags: clientFlags(
					&cli.StringFlag{Name: "input", EnvVars: []string{"WFHOST_INPUT"}, Usage: "the new run's input: JSON, @FILE or - (default: the ended run's)"},
					&cli.StringFlag{Name: "from-step", Usage: "the journal key to run again from (default: from scratch)"},
					&cli.StringFlag{Name: "version", EnvVars: []string{"WFHOST_WORKFLOW_VERSION"}, Usage: "workflow version of the new run (default: the ended run's)"},
					timeoutFlag(),
				),
				Action: fromJournal("restart", func(in json.RawMessage, from, version string, timeout int64) any {
					return wire.RestartRun{Input: in, FromStep: from, Version: version, TimeoutMs: timeout}
				}),
			},
			{
				Name: "fork", ArgsUsage: runArgs,
				Usage: "start a new run from a run's journal, live or ended, linked to it: a what-if with another --input or --version, the source untouched",
				Description: "The fork keeps the source's journal so far (every entry up to the first that has not ended), or the entries " +
					"before --from-step KEY, replays them instead of running them, and goes on by itself: it waits for its own events " +
					"while the source keeps waiting for its own.",
				Flags: clientFlags(
					&cli.StringFlag{Name: "input", EnvVars: []string{"WFHOST_INPUT"}, Usage: "the fork's input: JSON, @FILE or - (default: the source's)"},
					&cli.StringFlag{Name: "from-step", Usage: "the journal key to cut before (default: after the journal so far)"},
					&cli.StringFlag{Name: "version", EnvVars: []string{"WFHOST_WORKFLOW_VERSION"}, Usage: "workflow version of the fork (default: the source's)"},
					timeoutFlag(),
				),
				Action: fromJournal("fork", func(in json.RawMessage, from, version string, timeout int64) any {
					return wire.ForkRun{Input: in, FromStep: from, Version: version, TimeoutMs: timeout}
				}),
			},
			{
				Name: "terminate", Usage: "stop a run now, whatever it is doing: no code of it runs again", ArgsUsage: runArgs, Flags: clientFlags(),
				Action: func(c *cli.Context) error {
					a, err := args(c, "WORKFLOW", "RUN_ID")
					if err != nil {
						return err
					}
					return showRun(c, "POST", client.RunPath(a[0], a[1])+"/terminate")
				},
			},
		},
	}
}

// fromJournal is runs restart and runs fork: POST .../VERB with the body made of the flags
// --input, --from-step, --version and --timeout, which the two share.
func fromJournal(verb string, body func(input json.RawMessage, fromStep, version string, timeoutMs int64) any) cli.ActionFunc {
	return func(c *cli.Context) error {
		a, err := args(c, "WORKFLOW", "RUN_ID")
		if err != nil {
			return err
		}
		input, err := jsonFlag(c, "input")
		if err != nil {
			return err
		}
		timeout, err := timeoutMs(c)
		if err != nil {
			return err
		}
		cl, err := tenantClient(c)
		if err != nil {
			return err
		}
		raw, err := cl.Do(c.Context, "POST", client.RunPath(a[0], a[1])+"/"+verb, body(input, c.String("from-step"), c.String("version"), timeout))
		if err != nil {
			return err
		}
		return render(c, raw, func(w *tabwriter.Writer, r wire.Run) { printRun(w, r) })
	}
}

// cancelRun is runs cancel: POST .../cancel, and with --wait the run's end.
func cancelRun(c *cli.Context) error {
	a, err := args(c, "WORKFLOW", "RUN_ID")
	if err != nil {
		return err
	}
	grace := c.Duration("grace")
	if c.IsSet("grace") && grace < time.Millisecond {
		return usagef("--grace must be a millisecond or more, not %v", grace)
	}
	if c.Bool("wait") && c.Duration("timeout") <= 0 {
		return usagef("--timeout must be positive: %v", c.Duration("timeout"))
	}
	cl, err := tenantClient(c)
	if err != nil {
		return err
	}
	path := client.RunPath(a[0], a[1]) + "/cancel"
	if c.IsSet("grace") {
		path += "?graceMs=" + strconv.FormatInt(grace.Milliseconds(), 10)
	}
	raw, err := cl.Do(c.Context, "POST", path, nil)
	if err != nil {
		return err
	}
	if c.Bool("wait") {
		if raw, err = waitForRun(c.Context, cl, a[0], a[1], c.Duration("timeout")); err != nil {
			return err
		}
	}
	return render(c, raw, func(w *tabwriter.Writer, r wire.Run) {
		if !r.Status.Ended() && r.CancelGraceUntil != nil {
			fmt.Fprintf(w, "cancel requested: the workflow is told at its next durable call and is terminated at %s if it has not ended\n\n", timeText(*r.CancelGraceUntil))
		}
		printRun(w, r)
	})
}

func showRun(c *cli.Context, method, path string) error {
	cl, err := tenantClient(c)
	if err != nil {
		return err
	}
	raw, err := cl.Do(c.Context, method, path, nil)
	if err != nil {
		return err
	}
	return render(c, raw, func(w *tabwriter.Writer, r wire.Run) { printRun(w, r) })
}

func runSteps(c *cli.Context) error {
	a, err := args(c, "WORKFLOW", "RUN_ID")
	if err != nil {
		return err
	}
	raw, err := get(c, client.RunPath(a[0], a[1])+"/steps")
	if err != nil {
		return err
	}
	return render(c, raw, func(w *tabwriter.Writer, res wire.StepPage) {
		fmt.Fprintln(w, "SEQ\tKEY\tKIND\tSTATUS\tATTEMPT\tMS\tRESULT")
		for _, s := range res.Steps {
			var result string
			switch {
			case s.Error != nil:
				result = s.Error.Error()
				if s.Status == wire.StepRetrying && s.WakeAt != nil {
					result += ", next attempt " + timeText(*s.WakeAt)
				}
			case len(s.Output) > 0:
				result = compactJSON(s.Output)
			case s.Status == wire.StepWaiting:
				// The match says which payload the wait takes: the id a signal must carry.
				result = "waiting for " + s.Event
				if len(s.Match) > 0 {
					result += " matching " + compactJSON(s.Match)
				}
				result += ", until " + optionalTime(s.WakeAt)
			case s.WakeAt != nil:
				result = "until " + timeText(*s.WakeAt)
			}
			ms := "-"
			if s.DurationMs != nil {
				ms = strconv.FormatFloat(*s.DurationMs, 'f', 1, 64)
			}
			attempt := "-"
			if s.Attempt > 0 {
				attempt = strconv.Itoa(s.Attempt)
			}
			if s.Status != wire.StepWaiting { // a wait's match is short, and what a signal must carry
				result = truncate(result, 80)
			}
			fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", s.Seq, s.Key, s.Kind, s.Status, attempt, ms, result)
		}
	})
}

func runsListCommand() *cli.Command {
	return &cli.Command{
		Name: "list", Usage: "list runs, newest first, of one workflow or all", ArgsUsage: "[WORKFLOW]",
		Description: "Filters combine. --input customer.id=42 matches runs whose input contains\n" +
			`{"customer":{"id":42}}: a value that parses as JSON is that JSON, anything else a string.`,
		Flags: clientFlags(
			&cli.StringFlag{Name: "workflow", EnvVars: []string{"WFHOST_WORKFLOW"}, Usage: "only runs of this workflow (also the optional argument)"},
			&cli.StringFlag{Name: "status", EnvVars: []string{"WFHOST_STATUS"}, Usage: "only runs in this status: " + strings.Join(runStatuses(), ", ")},
			&cli.StringFlag{Name: "version", EnvVars: []string{"WFHOST_WORKFLOW_VERSION"}, Usage: "only runs of this workflow version"},
			&cli.StringFlag{Name: "idempotency-key", EnvVars: []string{"WFHOST_IDEMPOTENCY_KEY"}, Usage: "only the run started with this idempotency key (one per workflow)"},
			&cli.StringFlag{Name: "parent", EnvVars: []string{"WFHOST_PARENT"}, Usage: "only the children of this run (child workflows its steps started)"},
			&cli.StringFlag{Name: "since", EnvVars: []string{"WFHOST_SINCE"}, Usage: "only runs created at or after this time: RFC 3339, a date, or a duration ago (24h)"},
			&cli.StringFlag{Name: "until", EnvVars: []string{"WFHOST_UNTIL"}, Usage: "only runs created before this time, as --since"},
			&cli.GenericFlag{Name: "input", Value: &repeatable{}, EnvVars: []string{"WFHOST_INPUT_FILTER"}, Usage: "only runs whose input has key.path=value; repeatable"},
			&cli.IntFlag{Name: "limit", Value: 50, EnvVars: []string{"WFHOST_LIMIT"}, Usage: "runs per page"},
			&cli.StringFlag{Name: "cursor", EnvVars: []string{"WFHOST_CURSOR"}, Usage: "the page after this cursor (a previous page's nextCursor)"},
			&cli.BoolFlag{Name: "all", EnvVars: []string{"WFHOST_ALL"}, Usage: "follow the cursors and list every matching run"},
		),
		Action: listRuns,
	}
}

func listRuns(c *cli.Context) error {
	workflow, err := optionalArg(c, "WORKFLOW")
	if err != nil {
		return err
	}
	if f := c.String("workflow"); f != "" {
		if workflow != "" && workflow != f {
			return usagef("the workflow is named twice: %q and --workflow %q", workflow, f)
		}
		workflow = f
	}
	q := url.Values{}
	if s := c.String("status"); s != "" {
		q.Set("status", s)
	}
	for flag, param := range map[string]string{"version": "version", "idempotency-key": "idempotencyKey", "parent": "parent"} {
		if c.IsSet(flag) && c.String(flag) == "" {
			return usagef("--%s is empty: leave it out to filter nothing", flag)
		}
		if v := c.String(flag); v != "" {
			q.Set(param, v)
		}
	}
	now := time.Now()
	for _, name := range []string{"since", "until"} {
		t, err := timeFlag(c, name, now)
		if err != nil {
			return err
		}
		if !t.IsZero() {
			q.Set(name, t.UTC().Format(time.RFC3339Nano))
		}
	}
	filters, err := keyValuesFlag(c, "input")
	if err != nil {
		return err
	}
	for _, kv := range filters {
		if strings.HasPrefix(kv[0], ".") || strings.HasSuffix(kv[0], ".") || strings.Contains(kv[0], "..") {
			return usagef("--input %s=%s: the key path must be keys separated by single dots", kv[0], kv[1])
		}
		q.Set("input."+kv[0], kv[1])
	}
	if c.Int("limit") < 1 {
		return usagef("--limit must be at least 1: %d", c.Int("limit"))
	}
	q.Set("limit", strconv.Itoa(c.Int("limit")))
	cl, err := tenantClient(c)
	if err != nil {
		return err
	}
	path := "/v1/runs"
	if workflow != "" {
		path = workflowPath(workflow) + "/runs"
	}
	// With --all the pages are joined into one document in the shape of a page. The runs
	// stay as the server sent them, so --json shows each as the server wrote it.
	var all []json.RawMessage
	cursor := c.String("cursor")
	seen := map[string]bool{}
	for {
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		raw, err := cl.Do(c.Context, "GET", path+"?"+q.Encode(), nil)
		if err != nil {
			return err
		}
		if !c.Bool("all") {
			return render(c, raw, printRuns)
		}
		var page struct {
			Runs       []json.RawMessage `json:"runs"`
			NextCursor string            `json:"nextCursor"`
		}
		if err := json.Unmarshal(raw, &page); err != nil {
			return fmt.Errorf("decoding the server's response: %w", err)
		}
		all = append(all, page.Runs...)
		// A cursor seen before would loop forever; a correct server never sends one.
		if page.NextCursor == "" || seen[page.NextCursor] {
			break
		}
		seen[page.NextCursor] = true
		cursor = page.NextCursor
	}
	if all == nil {
		all = []json.RawMessage{}
	}
	raw, err := json.Marshal(map[string]any{"runs": all, "nextCursor": ""})
	if err != nil {
		return err
	}
	return render(c, raw, printRuns)
}

func printRuns(w *tabwriter.Writer, p wire.RunPage) {
	fmt.Fprintln(w, "ID\tWORKFLOW\tVERSION\tSTATUS\tCREATED\tDURATION")
	for _, r := range p.Runs {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.Workflow, r.Version, r.Status, timeText(r.CreatedAt), runDuration(r))
	}
	if p.NextCursor != "" {
		fmt.Fprintf(w, "\nmore: --cursor %s (or --all)\n", p.NextCursor)
	}
}

func payloadFlag() cli.Flag {
	return &cli.StringFlag{Name: "payload", EnvVars: []string{"WFHOST_PAYLOAD"}, Usage: "the event's payload: JSON, @FILE to read it from a file, or - from stdin (default: {})"}
}

func signalCommand() *cli.Command {
	return &cli.Command{
		Name: "signal", Usage: "send an event to one run", ArgsUsage: "WORKFLOW RUN_ID EVENT",
		Flags: clientFlags(payloadFlag(),
			&cli.StringFlag{Name: "id", EnvVars: []string{"WFHOST_SIGNAL_ID"}, Usage: "the signal's id: sending an id to the run again changes nothing (safe retries)"}),
		Action: func(c *cli.Context) error {
			a, err := args(c, "WORKFLOW", "RUN_ID", "EVENT")
			if err != nil {
				return err
			}
			path := client.RunPath(a[0], a[1]) + "/signals/" + url.PathEscape(a[2])
			if id := c.String("id"); id != "" {
				path += "?signalId=" + url.QueryEscape(id)
			}
			raw, err := sendEvent(c, path)
			if err != nil {
				return err
			}
			var res wire.SignalResult
			if err := json.Unmarshal(raw, &res); err != nil {
				return fmt.Errorf("decoding the server's response: %w", err)
			}
			if err := render(c, raw, func(w *tabwriter.Writer, s wire.SignalResult) {
				switch {
				case s.Duplicate:
					fmt.Fprintf(w, "signal %s was sent to run %s before: nothing changed (it was %s then)\n", s.SignalID, a[1], s.State)
				case s.State == wire.SignalDelivered:
					fmt.Fprintf(w, "event %s delivered to run %s\n", s.Event, a[1])
				case s.State == wire.SignalBuffered:
					fmt.Fprintf(w, "event %s buffered for run %s until one of its waits takes it\n", s.Event, a[1])
				default:
					fmt.Fprintf(w, "event %s %s for run %s\n", s.Event, s.State, a[1])
				}
			}); err != nil {
				return err
			}
			if res.State == wire.SignalBuffered && !res.Duplicate {
				explainBuffered(c, a[0], a[1], a[2])
			}
			return nil
		},
	}
}

// explainBuffered says why a signal was buffered when the run's journal shows it: a run that
// waits for this event right now has a wait whose match the payload missed (a wrong id, as a
// rule), which would otherwise pass unnoticed until the wait times out. Buffering itself is
// right (a later wait may match), so this is a note, not an error; it is best effort, and a
// failure to read the journal says nothing.
func explainBuffered(c *cli.Context, workflow, runID, event string) {
	raw, err := get(c, client.RunPath(workflow, runID)+"/steps")
	if err != nil {
		return
	}
	var page wire.StepPage
	if json.Unmarshal(raw, &page) != nil {
		return
	}
	var others []string
	for _, s := range page.Steps {
		if s.Status != wire.StepWaiting {
			continue
		}
		if s.Event == event {
			match := "any payload"
			if len(s.Match) > 0 {
				match = compactJSON(s.Match)
			}
			note(c, "the payload does not match what run %s waits for: its wait %q takes %s events matching %s; "+
				"the event stays buffered until a wait it matches takes it", runID, s.Key, event, match)
			return
		}
		others = append(others, s.Event)
	}
	if len(others) > 0 {
		note(c, "run %s is waiting for %s, not %s", runID, strings.Join(others, ", "), event)
	}
}

// startFlags reads what a command that may start a run was told of it: --input, --version,
// --retention-days and --run-timeout. Only what was given is sent: the server fills in the
// rest (the latest version, the retention).
func startFlags(c *cli.Context) (wire.StartRun, error) {
	input, err := jsonFlag(c, "input")
	if err != nil {
		return wire.StartRun{}, err
	}
	if c.Int("retention-days") < 0 {
		return wire.StartRun{}, usagef("--retention-days must not be negative: %d", c.Int("retention-days"))
	}
	timeout, err := timeoutMs(c)
	if err != nil {
		return wire.StartRun{}, err
	}
	retry, err := retryPolicy(c)
	if err != nil {
		return wire.StartRun{}, err
	}
	return wire.StartRun{Input: input, Version: c.String("version"), RetentionDays: c.Int("retention-days"), TimeoutMs: timeout, Retry: retry}, nil
}

// retryFlags set a started run's own retry policy: a failed run is retried as a new run.
func retryFlags() []cli.Flag {
	return []cli.Flag{
		&cli.IntFlag{Name: "retry-attempts", EnvVars: []string{"WFHOST_RETRY_ATTEMPTS"},
			Usage: "retry the run when it fails, as a new run with the same input, until this many runs (the first included) have failed (default: no retry)"},
		&cli.StringFlag{Name: "retry-backoff", EnvVars: []string{"WFHOST_RETRY_BACKOFF"}, Usage: "fixed, linear or exp (default exp)"},
		&cli.DurationFlag{Name: "retry-delay", EnvVars: []string{"WFHOST_RETRY_DELAY"}, Usage: "the first retry's delay (default 1s)"},
		&cli.DurationFlag{Name: "retry-max-delay", EnvVars: []string{"WFHOST_RETRY_MAX_DELAY"}, Usage: "the longest delay between retries (default 60s)"},
		&cli.StringFlag{Name: "on-exhausted", EnvVars: []string{"WFHOST_ON_EXHAUSTED"},
			Usage: "what the run's steps do when their attempts run out: fail, or pause the run for a resume (default: the workflow's); a step's own policy wins"},
	}
}

// retryPolicy is the policy --retry-* describe, nil without --retry-attempts; the server fills
// the fields left out and refuses a policy it could not follow.
func retryPolicy(c *cli.Context) (*abi.RetryPolicy, error) {
	exhausted := abi.Exhausted(c.String("on-exhausted"))
	if !c.IsSet("retry-attempts") {
		if c.IsSet("retry-backoff") || c.IsSet("retry-delay") || c.IsSet("retry-max-delay") {
			return nil, usagef("--retry-backoff, --retry-delay and --retry-max-delay need --retry-attempts")
		}
		if exhausted == "" {
			return nil, nil
		}
	}
	p := &abi.RetryPolicy{Attempts: c.Int("retry-attempts"), Backoff: abi.Backoff(c.String("retry-backoff")),
		BaseMs: c.Duration("retry-delay").Milliseconds(), MaxMs: c.Duration("retry-max-delay").Milliseconds(), OnExhausted: exhausted}
	if !c.IsSet("retry-attempts") {
		p.Attempts = 1 // --on-exhausted alone: the run itself is not retried
	}
	if p.Attempts < 1 {
		return nil, usagef("--retry-attempts must be 1 or more, not %d", p.Attempts)
	}
	if err := p.Validate(); err != nil {
		return nil, usagef("--retry-*: %v", err)
	}
	return p, nil
}

// timeoutFlag is a started run's workflow deadline.
func timeoutFlag() cli.Flag {
	return &cli.DurationFlag{Name: "run-timeout", EnvVars: []string{"WFHOST_RUN_TIMEOUT"},
		Usage: "a deadline for the started run (90s, 2h, ...): past it the run fails with run_timeout (default: none)"}
}

// timeoutMs is --run-timeout in milliseconds, refused when negative or under a millisecond.
func timeoutMs(c *cli.Context) (int64, error) {
	d := c.Duration("run-timeout")
	if d < 0 || (d > 0 && d < time.Millisecond) {
		return 0, usagef("--run-timeout must be a positive duration of a millisecond or more, not %v", d)
	}
	return d.Milliseconds(), nil
}

func signalWithStartCommand() *cli.Command {
	return &cli.Command{
		Name:      "signal-with-start",
		Usage:     "send an event to the run a key names, starting it first unless one with the key is open",
		ArgsUsage: "WORKFLOW KEY EVENT",
		Flags: clientFlags(append(retryFlags(), payloadFlag(),
			&cli.StringFlag{Name: "input", EnvVars: []string{"WFHOST_INPUT"}, Usage: "the input of the run if it is started: JSON, @FILE to read it from a file, or - from stdin"},
			&cli.StringFlag{Name: "version", EnvVars: []string{"WFHOST_WORKFLOW_VERSION"}, Usage: "workflow version of a started run (default: the latest)"},
			&cli.IntFlag{Name: "retention-days", EnvVars: []string{"WFHOST_RETENTION_DAYS"}, Usage: "keep a started run this many days once finished (default: the workflow's, else the daemon's)"},
			&cli.StringFlag{Name: "id", EnvVars: []string{"WFHOST_SIGNAL_ID"}, Usage: "the signal's id: sending it again while the run is open changes nothing (safe retries)"},
			timeoutFlag())...),
		Action: func(c *cli.Context) error {
			a, err := args(c, "WORKFLOW", "KEY", "EVENT")
			if err != nil {
				return err
			}
			start, err := startFlags(c)
			if err != nil {
				return err
			}
			payload, err := jsonFlag(c, "payload")
			if err != nil {
				return err
			}
			cl, err := tenantClient(c)
			if err != nil {
				return err
			}
			body := wire.SignalWithStart{IdempotencyKey: a[1], Input: start.Input, Version: start.Version,
				RetentionDays: start.RetentionDays, TimeoutMs: start.TimeoutMs, Retry: start.Retry, Event: a[2], Payload: payload, SignalID: c.String("id")}
			raw, err := cl.Do(c.Context, "POST", "/v1/workflows/"+url.PathEscape(a[0])+"/signal-with-start", body)
			if err != nil {
				return err
			}
			return render(c, raw, func(w *tabwriter.Writer, r wire.SignalWithStartResult) {
				if r.Created {
					fmt.Fprintf(w, "started run %s of %s@%s (key %s)\n", r.Run.ID, r.Run.Workflow, r.Run.Version, a[1])
				} else {
					fmt.Fprintf(w, "run %s of %s@%s is open under key %s\n", r.Run.ID, r.Run.Workflow, r.Run.Version, a[1])
				}
				switch {
				case r.Signal.Duplicate:
					fmt.Fprintf(w, "signal %s was sent to it before: nothing changed\n", r.Signal.SignalID)
				case r.Signal.State == wire.SignalDelivered:
					fmt.Fprintf(w, "event %s delivered to it\n", r.Signal.Event)
				default:
					fmt.Fprintf(w, "event %s kept for it until one of its waits takes it\n", r.Signal.Event)
				}
			})
		},
	}
}

func eventsCommand() *cli.Command {
	return &cli.Command{
		Name: "events", Usage: "broadcast events",
		Subcommands: []*cli.Command{{
			Name: "send", Usage: "broadcast an event to the tenant's waiting runs, and start the workflows it triggers", ArgsUsage: "EVENT",
			Flags: clientFlags(payloadFlag(),
				&cli.StringFlag{Name: "id", EnvVars: []string{"WFHOST_EVENT_ID"}, Usage: "the event's id: sending an id again changes nothing (safe retries)"}),
			Action: func(c *cli.Context) error {
				a, err := args(c, "EVENT")
				if err != nil {
					return err
				}
				path := "/v1/events/" + url.PathEscape(a[0])
				if id := c.String("id"); id != "" {
					path += "?eventId=" + url.QueryEscape(id)
				}
				raw, err := sendEvent(c, path)
				if err != nil {
					return err
				}
				return render(c, raw, func(w *tabwriter.Writer, b wire.BroadcastResult) {
					fmt.Fprintf(w, "event\t%s\n", b.Event)
					if b.EventID != "" {
						fmt.Fprintf(w, "event id\t%s\n", b.EventID)
					}
					if b.Duplicate {
						fmt.Fprintf(w, "duplicate\tyes: this id was sent before; nothing changed\n")
					} else {
						fmt.Fprintf(w, "duplicate\tno\n")
					}
					fmt.Fprintf(w, "resolved\t%d waiting run(s)\n", b.Resolved)
					if b.Duplicate {
						// A duplicate started nothing: the server repeats the runs the first send started, so a retry learns them.
						fmt.Fprintf(w, "started\t%d run(s), by the first send\n", len(b.Started))
					} else {
						fmt.Fprintf(w, "started\t%d run(s)\n", len(b.Started))
					}
					for _, r := range b.Started {
						fmt.Fprintf(w, "\t%s %s@%s\n", r.ID, r.Workflow, r.Version)
					}
				})
			},
		}},
	}
}

// sendEvent posts --payload (checked first) to path.
func sendEvent(c *cli.Context, path string) (json.RawMessage, error) {
	payload, err := jsonFlag(c, "payload")
	if err != nil {
		return nil, err
	}
	cl, err := tenantClient(c)
	if err != nil {
		return nil, err
	}
	var body any
	if payload != nil {
		body = payload
	}
	return cl.Do(c.Context, "POST", path, body)
}
