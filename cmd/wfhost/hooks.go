package main

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/wfhost/wfhost/api/wire"
)

// Completion hooks of the tenant of --token: what happens when a run ends (a start of another
// workflow, or a signed webhook), and their deliveries (engine/hooks.go).

func hooksCommand() *cli.Command {
	return &cli.Command{
		Name: "hooks", Usage: "completion hooks: start a workflow or call a webhook when a run ends",
		Subcommands: []*cli.Command{
			{
				Name: "list", Usage: "list the tenant's hooks, its own and its modules' (onEnd)", Flags: clientFlags(),
				Action: func(c *cli.Context) error {
					if _, err := args(c); err != nil {
						return err
					}
					raw, err := get(c, "/v1/hooks")
					if err != nil {
						return err
					}
					return render(c, raw, func(w *tabwriter.Writer, p wire.HookPage) {
						fmt.Fprintln(w, "ID\tSOURCE\tWORKFLOW\tWHEN\tTHEN")
						for _, h := range p.Hooks {
							fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", h.ID, h.Source, hookWorkflow(h), strings.Join(h.When, ","), hookThen(h))
						}
					})
				},
			},
			{
				Name: "set", ArgsUsage: "ID",
				Usage: "create or replace a hook: --when and --start WORKFLOW or --webhook URL (a new webhook prints the signing secret once)",
				Flags: clientFlags(
					&cli.StringFlag{Name: "workflow", Usage: "the workflow whose runs fire it (default: every workflow of the tenant)"},
					&cli.StringSliceFlag{Name: "when", Required: true, Usage: "the run ends that fire it: completed, failed, cancelled (repeat or comma-separate)"},
					&cli.StringFlag{Name: "start", Usage: "start this workflow with the ended run as input"},
					&cli.StringFlag{Name: "start-version", Usage: "the version --start starts (default: the latest when the run ends)"},
					&cli.StringFlag{Name: "webhook", Usage: "POST the ended run, signed, to this http(s) URL (its host must be in the tenant's allowlist)"},
				),
				Action: func(c *cli.Context) error {
					a, err := args(c, "ID")
					if err != nil {
						return err
					}
					if (c.String("start") == "") == (c.String("webhook") == "") {
						return usagef("give exactly one of --start and --webhook")
					}
					body := wire.PutHook{Workflow: c.String("workflow"), Webhook: c.String("webhook")}
					for _, w := range c.StringSlice("when") {
						for _, s := range strings.Split(w, ",") {
							if s = strings.TrimSpace(s); s != "" {
								body.When = append(body.When, s)
							}
						}
					}
					if c.String("start") != "" {
						body.Start = &wire.HookStart{Workflow: c.String("start"), Version: c.String("start-version")}
					}
					cl, err := tenantClient(c)
					if err != nil {
						return err
					}
					raw, err := cl.Do(c.Context, "PUT", "/v1/hooks/"+url.PathEscape(a[0]), body)
					if err != nil {
						return err
					}
					return render(c, raw, printHook)
				},
			},
			{
				Name: "delete", Usage: "delete a tenant hook (its deliveries stay)", ArgsUsage: "ID", Flags: clientFlags(),
				Action: func(c *cli.Context) error {
					a, err := args(c, "ID")
					if err != nil {
						return err
					}
					cl, err := tenantClient(c)
					if err != nil {
						return err
					}
					raw, err := cl.Do(c.Context, "DELETE", "/v1/hooks/"+url.PathEscape(a[0]), nil)
					if err != nil {
						return err
					}
					return render(c, raw, func(w *tabwriter.Writer, d wire.HookDeleted) {
						fmt.Fprintf(w, "hook %s deleted\n", d.ID)
					})
				},
			},
			{
				Name: "rotate-secret", Usage: "replace the tenant's webhook signing secret and print it (this once)", Flags: clientFlags(),
				Action: func(c *cli.Context) error {
					if _, err := args(c); err != nil {
						return err
					}
					cl, err := tenantClient(c)
					if err != nil {
						return err
					}
					raw, err := cl.Do(c.Context, "POST", "/v1/hooks/signing-secret", nil)
					if err != nil {
						return err
					}
					return render(c, raw, func(w *tabwriter.Writer, s wire.SigningSecret) {
						fmt.Fprintf(w, "signing secret\t%s\n(shown once: deliveries are signed with it from now on)\n", s.SigningSecret)
					})
				},
			},
			{
				Name: "deliveries", Usage: "list the tenant's hook deliveries, newest first, with their attempts and last error",
				Flags: clientFlags(
					&cli.StringFlag{Name: "run", Usage: "the deliveries of this ended run"},
					&cli.StringFlag{Name: "started-run", Usage: "the delivery that started this run (its triggeredBy)"},
					&cli.StringFlag{Name: "status", Usage: "pending, delivered or failed"},
					&cli.IntFlag{Name: "limit", Usage: "at most this many (1 to 500; default 100)"},
				),
				Action: func(c *cli.Context) error {
					if _, err := args(c); err != nil {
						return err
					}
					q := url.Values{}
					for flag, param := range map[string]string{"run": "runId", "started-run": "startedRunId", "status": "status"} {
						if v := c.String(flag); v != "" {
							q.Set(param, v)
						}
					}
					if c.IsSet("limit") {
						q.Set("limit", strconv.Itoa(c.Int("limit")))
					}
					path := "/v1/hooks/deliveries"
					if len(q) > 0 {
						path += "?" + q.Encode()
					}
					raw, err := get(c, path)
					if err != nil {
						return err
					}
					return render(c, raw, func(w *tabwriter.Writer, p wire.DeliveryPage) {
						fmt.Fprintln(w, "ID\tRUN\tHOOK\tKIND\tSTATUS\tATTEMPTS\tSTARTED RUN\tLAST ERROR")
						for _, d := range p.Deliveries {
							fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", d.ID, d.RunID, d.HookID, d.Kind, d.Status, d.Attempts,
								orDash(d.StartedRunID), orDash(d.LastError))
						}
					})
				},
			},
		},
	}
}

func hookWorkflow(h wire.Hook) string {
	switch {
	case h.Workflow == "":
		return "*"
	case h.Version != "":
		return h.Workflow + "@" + h.Version
	}
	return h.Workflow
}

func hookThen(h wire.Hook) string {
	if h.Start != nil {
		if h.Start.Version != "" {
			return "start " + h.Start.Workflow + "@" + h.Start.Version
		}
		return "start " + h.Start.Workflow
	}
	return "POST " + h.Webhook
}

func printHook(w *tabwriter.Writer, h wire.Hook) {
	fmt.Fprintf(w, "hook\t%s\nsource\t%s\nworkflow\t%s\nwhen\t%s\nthen\t%s\n", h.ID, h.Source, hookWorkflow(h),
		strings.Join(h.When, ","), hookThen(h))
	if h.SigningSecret != "" {
		fmt.Fprintf(w, "signing secret\t%s\n(shown once: verify Wfhost-Signature with it; rotate with wfhost hooks rotate-secret)\n", h.SigningSecret)
	}
}
