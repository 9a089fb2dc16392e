package main

import (
	"fmt"
	"net/url"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/wfhost/wfhost/api/client"
	"github.com/wfhost/wfhost/api/wire"
)

// Pause and resume: runs pause|resume, workflows pause|resume.

func runsPauseCommand() *cli.Command {
	return &cli.Command{
		Name: "pause", ArgsUsage: "WORKFLOW RUN_ID", Flags: clientFlags(),
		Usage: "pause a run: it finishes the step it is in and holds until it is resumed (status paused)",
		Action: func(c *cli.Context) error {
			a, err := args(c, "WORKFLOW", "RUN_ID")
			if err != nil {
				return err
			}
			return showRun(c, "POST", client.RunPath(a[0], a[1])+"/pause")
		},
	}
}

func runsResumeCommand() *cli.Command {
	return &cli.Command{
		Name: "resume", ArgsUsage: "WORKFLOW RUN_ID",
		Usage: "resume a paused run, optionally on another --version of its workflow (checked by a dry replay of its journal first)",
		Flags: clientFlags(&cli.StringFlag{Name: "version", Usage: "a version of the run's workflow to resume on (default: the run's own)"}),
		Action: func(c *cli.Context) error {
			a, err := args(c, "WORKFLOW", "RUN_ID")
			if err != nil {
				return err
			}
			cl, err := tenantClient(c)
			if err != nil {
				return err
			}
			raw, err := cl.Do(c.Context, "POST", client.RunPath(a[0], a[1])+"/resume", wire.ResumeRun{Version: c.String("version")})
			if err != nil {
				return err
			}
			return render(c, raw, func(w *tabwriter.Writer, r wire.Run) { printRun(w, r) })
		},
	}
}

// workflowPauseCommand is workflows pause (pause) or workflows resume.
func workflowPauseCommand(pause bool) *cli.Command {
	name, usage := "resume", "resume a paused workflow (or --version): the runs it held go on"
	if pause {
		name, usage = "pause", "pause a workflow (or one --version): its runs hold and new runs are created paused, until it is resumed"
	}
	return &cli.Command{
		Name: name, Usage: usage, ArgsUsage: "WORKFLOW",
		Flags: clientFlags(&cli.StringFlag{Name: "version", Usage: "one version of the workflow (default: every version)"}),
		Action: func(c *cli.Context) error {
			a, err := args(c, "WORKFLOW")
			if err != nil {
				return err
			}
			cl, err := tenantClient(c)
			if err != nil {
				return err
			}
			path := workflowPath(a[0]) + "/" + name
			if v := c.String("version"); v != "" {
				path += "?version=" + url.QueryEscape(v)
			}
			raw, err := cl.Do(c.Context, "POST", path, nil)
			if err != nil {
				return err
			}
			return render(c, raw, func(w *tabwriter.Writer, p wire.WorkflowPaused) {
				what := p.Workflow
				if p.Version != "" {
					what += " version " + p.Version
				}
				if p.Paused {
					fmt.Fprintf(w, "%s paused: %d runs paused or pausing\n", what, p.Runs)
					return
				}
				fmt.Fprintf(w, "%s resumed: %d runs resumed\n", what, p.Runs)
			})
		},
	}
}

// pausedText is a workflow's pauses in the workflows list: "all", its versions paused, or "-".
func pausedText(wf wire.WorkflowSummary) string {
	if wf.Paused {
		return "all"
	}
	return orDash(strings.Join(wf.PausedVersions, ","))
}
