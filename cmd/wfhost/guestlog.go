package main

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/wfhost/wfhost/api/client"
	"github.com/wfhost/wfhost/api/wire"
)

func runsLogsCommand() *cli.Command {
	return &cli.Command{
		Name: "logs", ArgsUsage: "WORKFLOW RUN_ID",
		Usage: "show what a run's guest logged (its log calls and stdout/stderr lines, redacted; at most 1,000 lines a run, the oldest kept)",
		Flags: clientFlags(),
		Action: func(c *cli.Context) error {
			a, err := args(c, "WORKFLOW", "RUN_ID")
			if err != nil {
				return err
			}
			cl, err := tenantClient(c)
			if err != nil {
				return err
			}
			path := client.RunPath(a[0], a[1]) + "/logs"
			var all []wire.GuestLogLine
			var cursor int64
			for {
				q := url.Values{"limit": {"1000"}}
				if cursor > 0 {
					q.Set("cursor", strconv.FormatInt(cursor, 10))
				}
				raw, err := cl.Do(c.Context, "GET", path+"?"+q.Encode(), nil)
				if err != nil {
					return err
				}
				var page wire.GuestLogPage
				if err := json.Unmarshal(raw, &page); err != nil {
					return fmt.Errorf("decoding the server's response: %w", err)
				}
				all = append(all, page.Lines...)
				if page.NextCursor == "" || len(page.Lines) == 0 {
					break
				}
				cursor = page.Lines[len(page.Lines)-1].Seq
			}
			if all == nil {
				all = []wire.GuestLogLine{}
			}
			raw, err := json.Marshal(wire.GuestLogPage{Lines: all})
			if err != nil {
				return err
			}
			return render(c, raw, func(w *tabwriter.Writer, p wire.GuestLogPage) {
				fmt.Fprintln(w, "AT\tLEVEL\tSTEP\tMESSAGE")
				for _, l := range p.Lines {
					// A message is the guest's text: its tabs and line breaks would break the
					// table, so the table shows it quoted where it holds any.
					msg := l.Message
					if strconv.Quote(msg) != `"`+msg+`"` {
						msg = strconv.Quote(msg)
					}
					fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", l.At.Format(time.RFC3339Nano), l.Level, orDash(l.Step), msg)
				}
			})
		},
	}
}
