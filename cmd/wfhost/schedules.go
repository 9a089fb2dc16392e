package main

import (
	"fmt"
	"net/url"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/wfhost/wfhost/api/wire"
)

// Schedules of the tenant of --token: each starts runs of a workflow at the fire times of a
// cron expression or an interval (engine/schedules.go).

func schedulesCommand() *cli.Command {
	idCommand := func(name, usage, method, suffix string) *cli.Command {
		return &cli.Command{
			Name: name, Usage: usage, ArgsUsage: "ID", Flags: clientFlags(),
			Action: func(c *cli.Context) error {
				a, err := args(c, "ID")
				if err != nil {
					return err
				}
				cl, err := tenantClient(c)
				if err != nil {
					return err
				}
				raw, err := cl.Do(c.Context, method, schedulePath(a[0])+suffix, nil)
				if err != nil {
					return err
				}
				if method == "DELETE" {
					return render(c, raw, func(w *tabwriter.Writer, d wire.ScheduleDeleted) {
						fmt.Fprintf(w, "schedule %s deleted (the runs it started stay)\n", d.ID)
					})
				}
				return render(c, raw, printSchedule)
			},
		}
	}
	return &cli.Command{
		Name: "schedules", Usage: "start runs of a workflow on a cron expression or at an interval",
		Subcommands: []*cli.Command{
			{
				Name: "create", ArgsUsage: "ID",
				Usage: "create a schedule: --workflow and --cron (with --timezone) or --every",
				Flags: clientFlags(
					&cli.StringFlag{Name: "workflow", Required: true, Usage: "the workflow each fire time starts"},
					&cli.StringFlag{Name: "version", Usage: "the workflow version (default: the latest at each fire time)"},
					&cli.StringFlag{Name: "cron", Usage: `a cron expression: five fields, or six with seconds first ("0 30 9 * * MON-FRI"), or @daily, @hourly, ...`},
					&cli.StringFlag{Name: "timezone", Usage: "the IANA time zone of --cron (Europe/Paris; default UTC)"},
					&cli.DurationFlag{Name: "every", Usage: "fire at this interval instead of --cron (at its multiples since the Unix epoch; at least 1s)"},
					&cli.StringFlag{Name: "input", Usage: "each run's input: JSON, @FILE to read it from a file, or - from stdin"},
					&cli.StringFlag{Name: "overlap", Usage: "while the last run is live: skip (default), buffer_one, allow_all or cancel_previous"},
					&cli.DurationFlag{Name: "catchup-window", Usage: "fire times missed by longer than this (no host up) are skipped (default 1m)"},
					&cli.DurationFlag{Name: "jitter", Usage: "start each run up to this long after its fire time"},
					&cli.BoolFlag{Name: "paused", Usage: "create it paused"},
				),
				Action: func(c *cli.Context) error {
					a, err := args(c, "ID")
					if err != nil {
						return err
					}
					input, err := jsonFlag(c, "input")
					if err != nil {
						return err
					}
					body := wire.CreateSchedule{
						ID: a[0], Workflow: c.String("workflow"), Version: c.String("version"), Cron: c.String("cron"),
						TimeZone: c.String("timezone"), Input: input, Overlap: c.String("overlap"), Paused: c.Bool("paused"),
					}
					for _, d := range []struct {
						flag string
						ms   *int64
					}{{"every", &body.IntervalMs}, {"catchup-window", &body.CatchupWindowMs}, {"jitter", &body.JitterMs}} {
						if *d.ms, err = durationMs(c, d.flag); err != nil {
							return err
						}
					}
					cl, err := tenantClient(c)
					if err != nil {
						return err
					}
					raw, err := cl.Do(c.Context, "POST", "/v1/schedules", body)
					if err != nil {
						return err
					}
					return render(c, raw, printSchedule)
				},
			},
			{
				Name: "list", Usage: "list the tenant's schedules", Flags: clientFlags(),
				Action: func(c *cli.Context) error {
					if _, err := args(c); err != nil {
						return err
					}
					raw, err := get(c, "/v1/schedules")
					if err != nil {
						return err
					}
					return render(c, raw, func(w *tabwriter.Writer, p wire.SchedulePage) {
						fmt.Fprintln(w, "ID\tWHEN\tWORKFLOW\tOVERLAP\tNEXT\tLAST RUN")
						for _, s := range p.Schedules {
							next := timeText(s.DueAt)
							if s.Paused {
								next = "paused"
							}
							fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", s.ID, scheduleWhen(s), s.Workflow, s.Overlap, next, orDash(s.LastRunID))
						}
					})
				},
			},
			idCommand("get", "show a schedule and where it stands", "GET", ""),
			idCommand("pause", "pause a schedule: nothing fires until it is resumed", "POST", "/pause"),
			idCommand("resume", "resume a schedule from its next fire time after now (the paused time is not caught up)", "POST", "/resume"),
			idCommand("delete", "delete a schedule (the runs it started stay)", "DELETE", ""),
			{
				Name: "trigger", Usage: "fire a schedule now, paused or not; its overlap policy applies", ArgsUsage: "ID", Flags: clientFlags(),
				Action: func(c *cli.Context) error {
					a, err := args(c, "ID")
					if err != nil {
						return err
					}
					cl, err := tenantClient(c)
					if err != nil {
						return err
					}
					raw, err := cl.Do(c.Context, "POST", schedulePath(a[0])+"/trigger", nil)
					if err != nil {
						return err
					}
					return render(c, raw, func(w *tabwriter.Writer, t wire.Triggered) {
						fmt.Fprintf(w, "fire time %s: %s\n", timeText(t.FireAt), t.Outcome)
						if t.Note != "" {
							fmt.Fprintln(w, t.Note)
						}
						if t.Run != nil {
							fmt.Fprintln(w)
							printRun(w, *t.Run)
						}
					})
				},
			},
			{
				Name: "next", Usage: "list a schedule's next fire times", ArgsUsage: "ID",
				Flags: clientFlags(&cli.IntFlag{Name: "count", Aliases: []string{"n"}, Value: 10, Usage: "how many (1 to 100)"}),
				Action: func(c *cli.Context) error {
					a, err := args(c, "ID")
					if err != nil {
						return err
					}
					raw, err := get(c, schedulePath(a[0])+"/next?count="+strconv.Itoa(c.Int("count")))
					if err != nil {
						return err
					}
					return render(c, raw, func(w *tabwriter.Writer, ft wire.FireTimes) {
						fmt.Fprintln(w, "FIRE TIME\tSTARTS")
						for _, f := range ft.FireTimes {
							fmt.Fprintf(w, "%s\t%s\n", f.At.Format(time.RFC3339), f.Due.Format(time.RFC3339Nano))
						}
					})
				},
			},
		},
	}
}

func schedulePath(id string) string { return "/v1/schedules/" + url.PathEscape(id) }

// durationMs is a duration flag in whole milliseconds; 0 when unset.
func durationMs(c *cli.Context, name string) (int64, error) {
	d := c.Duration(name)
	if d%time.Millisecond != 0 {
		return 0, usagef("--%s %v: give whole milliseconds", name, d)
	}
	if d < 0 {
		return 0, usagef("--%s %v: must not be negative", name, d)
	}
	return d.Milliseconds(), nil
}

// scheduleWhen is a schedule's spec in a few words.
func scheduleWhen(s wire.Schedule) string {
	if s.Cron == "" {
		return "every " + (time.Duration(s.IntervalMs) * time.Millisecond).String()
	}
	if s.TimeZone == "" {
		return s.Cron + " (UTC)"
	}
	return s.Cron + " (" + s.TimeZone + ")"
}

func printSchedule(w *tabwriter.Writer, s wire.Schedule) {
	fmt.Fprintf(w, "schedule\t%s\nwhen\t%s\nworkflow\t%s\n", s.ID, scheduleWhen(s), s.Workflow)
	if s.Version != "" {
		fmt.Fprintf(w, "version\t%s\n", s.Version)
	}
	fmt.Fprintf(w, "input\t%s\noverlap\t%s\ncatch-up window\t%v\n", truncate(compactJSON(s.Input), 200), s.Overlap,
		time.Duration(s.CatchupWindowMs)*time.Millisecond)
	if s.JitterMs > 0 {
		fmt.Fprintf(w, "jitter\t%v\n", time.Duration(s.JitterMs)*time.Millisecond)
	}
	if s.Paused {
		fmt.Fprintln(w, "state\tpaused")
	} else {
		fmt.Fprintf(w, "next fire time\t%s (starts %s)\n", timeText(s.NextFireAt), s.DueAt.Format(time.RFC3339Nano))
	}
	if s.BufferedFireAt != nil {
		fmt.Fprintf(w, "buffered\t%s\n", timeText(*s.BufferedFireAt))
	}
	if s.LastRunID != "" {
		fmt.Fprintf(w, "last run\t%s (fire time %s)\n", s.LastRunID, optionalTime(s.LastFireAt))
	}
	if s.LastError != "" {
		fmt.Fprintf(w, "last note\t%s\n", s.LastError)
	}
	fmt.Fprintf(w, "created\t%s\n", timeText(s.CreatedAt))
}
