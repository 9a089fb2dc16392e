package main

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/wfhost/wfhost/api/client"
	"github.com/wfhost/wfhost/api/wire"
	"github.com/wfhost/wfhost/engine"
)

// The upgrade gate from the CLI: wfhost deploy --upgrade=check|upgrade|strict, and
// wfhost upgrades get ID for a kept report.

func upgradeFlag() cli.Flag {
	return &cli.StringFlag{Name: "upgrade", EnvVars: []string{"WFHOST_UPGRADE"},
		Usage: "replay every open run of the module's workflows against it first: check (report only: nothing is bound or moved), upgrade (move the runs that pass, pin the rest to their module) or strict (refuse the deploy unless every run passes)"}
}

// upgradeQuery is the deploy's query for --upgrade, checked here so a typo is a usage error.
func upgradeQuery(c *cli.Context) (string, error) {
	p := c.String("upgrade")
	if p == "" {
		return "", nil
	}
	if _, err := engine.ParseUpgradePolicy(p); err != nil {
		return "", usagef("--upgrade must be check, upgrade or strict, not %.40q", p)
	}
	return "upgrade=" + url.QueryEscape(p), nil
}

// upgradeRefused words a strict deploy's refusal with the command that shows the report.
func upgradeRefused(err error) error {
	var apiErr *client.Error
	if !errors.As(err, &apiErr) || apiErr.Status != http.StatusConflict || apiErr.Code != "upgrade_refused" {
		return err
	}
	e := *apiErr
	if _, id, ok := strings.Cut(e.Message, "; report "); ok {
		e.Message += "; see: wfhost upgrades get " + id
	}
	return &e
}

// printUpgradeSummary prints what the gate found, after a deploy's table.
func printUpgradeSummary(w *tabwriter.Writer, u *wire.UpgradeSummary) {
	fmt.Fprintf(w, "\nupgrade gate (%s): %d open runs checked in %d ms\n", u.Policy, u.Checked, u.DurationMs)
	verdicts := make([]string, 0, len(u.Verdicts))
	for v := range u.Verdicts {
		verdicts = append(verdicts, v)
	}
	sort.Strings(verdicts)
	for _, v := range verdicts {
		fmt.Fprintf(w, "  %s\t%d\n", v, u.Verdicts[v])
	}
	switch {
	case u.Deployed:
		fmt.Fprintf(w, "deployed: %d runs moved to this module, %d pinned to their own\n", u.Moved, u.Pinned)
	case u.Refused != "":
		fmt.Fprintf(w, "refused: %s\n", u.Refused)
	default:
		fmt.Fprintln(w, "not deployed (check): nothing was bound or moved")
	}
	fmt.Fprintf(w, "report: wfhost upgrades get %s\n", u.ID)
}

func upgradesCommand() *cli.Command {
	return &cli.Command{
		Name: "upgrades", Usage: "the upgrade gate's reports (wfhost deploy --upgrade)",
		Subcommands: []*cli.Command{{
			Name: "get", Usage: "show a report: every open run the gate checked, with its verdict", ArgsUsage: "ID",
			Flags: clientFlags(&cli.BoolFlag{Name: "all", Usage: "list every run, not only those that did not pass or did not move"}),
			Action: func(c *cli.Context) error {
				a, err := args(c, "ID")
				if err != nil {
					return err
				}
				raw, err := get(c, "/v1/upgrades/"+url.PathEscape(a[0]))
				if err != nil {
					return err
				}
				return render(c, raw, func(w *tabwriter.Writer, r wire.UpgradeReport) { printUpgradeReport(w, r, c.Bool("all")) })
			},
		}},
	}
}

func printUpgradeReport(w *tabwriter.Writer, r wire.UpgradeReport, all bool) {
	var targets []string
	for _, t := range r.Targets {
		targets = append(targets, t.Workflow+"@"+t.Version)
	}
	fmt.Fprintf(w, "upgrade %s\nmodule\t%s\ntargets\t%s\nreplace\t%t\ncreated\t%s\n", r.ID, r.Digest, orDash(strings.Join(targets, ", ")), r.Replace, timeText(r.CreatedAt))
	printUpgradeSummary(w, &r.UpgradeSummary)
	shown := 0
	for _, run := range r.Runs {
		if !all && run.Verdict == "compatible" && run.Moved {
			continue
		}
		if shown == 0 {
			fmt.Fprintln(w, "\nRUN\tVERSION\tVERDICT\tMOVED\tAT\tDETAIL")
		}
		shown++
		at, detail := "-", run.Note
		switch {
		case run.Divergence != nil:
			at = fmt.Sprint(run.Divergence.Seq)
			reached := "the workflow's end"
			if run.Divergence.Reached != nil {
				reached = run.Divergence.Reached.Kind + " " + run.Divergence.Reached.Key
			}
			detail = fmt.Sprintf("expected %s %s, reached %s", run.Divergence.Expected.Kind, run.Divergence.Expected.Key, reached)
		case run.Stopped != nil:
			at = fmt.Sprint(run.Stopped.Seq)
			if detail == "" {
				detail = "stops at " + run.Stopped.At.Kind + " " + run.Stopped.At.Key
			}
		case run.Error != nil:
			detail = "fails: " + run.Error.Message
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%t\t%s\t%s\n", run.RunID, run.Version, run.Verdict, run.Moved, at, detail)
		for _, l := range run.Logs {
			fmt.Fprintf(w, "\t\t\t\t\tguest %s: %s\n", strings.ToLower(l.Level), l.Message)
		}
	}
}
