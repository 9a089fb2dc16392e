package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/wfhost/wfhost/api/client"
	"github.com/wfhost/wfhost/api/wire"
)

func runsLogCommand() *cli.Command {
	return &cli.Command{
		Name: "log", ArgsUsage: "WORKFLOW RUN_ID",
		Usage: "show a run's lifecycle log: created, claimed by a host, suspended and why, woken, attempts failed and retried, events delivered, cancel asked, ended; with --follow, new entries as they come until the run ends",
		Flags: clientFlags(
			&cli.BoolFlag{Name: "follow", Usage: "keep printing new entries until the run ends (or the command is interrupted); with --output json, one entry a line"},
			&cli.DurationFlag{Name: "interval", Value: time.Second, Usage: "how often --follow asks for new entries"},
		),
		Action: runLog,
	}
}

// runLog is runs log: every page of GET .../log, or with --follow the pages as they come.
func runLog(c *cli.Context) error {
	a, err := args(c, "WORKFLOW", "RUN_ID")
	if err != nil {
		return err
	}
	interval := c.Duration("interval")
	if interval < 10*time.Millisecond || interval > time.Hour {
		return usagef("--interval must be from 10ms to 1h, not %v", interval)
	}
	cl, err := tenantClient(c)
	if err != nil {
		return err
	}
	path := client.RunPath(a[0], a[1]) + "/log"
	if !c.Bool("follow") {
		var all []wire.LogEntry
		var cursor int64
		for {
			page, err := logPageAfter(c.Context, cl, path, cursor)
			if err != nil {
				return err
			}
			all = append(all, page.Entries...)
			if page.NextCursor == "" {
				break
			}
			cursor = page.Entries[len(page.Entries)-1].Seq
		}
		raw, err := json.Marshal(wire.LogPage{Entries: all})
		if err != nil {
			return err
		}
		return render(c, raw, func(w *tabwriter.Writer, p wire.LogPage) {
			fmt.Fprintln(w, "SEQ\tAT\tKIND\tHOST\tDETAIL")
			printLogEntries(w, p.Entries)
		})
	}
	return followLog(c, cl, path, interval)
}

// followLog prints the log's entries as they come, asking every interval, until an ended entry
// (nothing follows a run's end) or the command's context ends.
func followLog(c *cli.Context, cl *client.Client, path string, interval time.Duration) error {
	var cursor int64
	header := !structured(c)
	for {
		page, err := logPageAfter(c.Context, cl, path, cursor)
		if err != nil {
			if c.Context.Err() != nil {
				return nil // interrupted: what was printed is the answer
			}
			return err
		}
		if len(page.Entries) > 0 {
			cursor = page.Entries[len(page.Entries)-1].Seq
			if err := printFollowed(c, page.Entries, header); err != nil {
				return err
			}
			header = false
			if page.Entries[len(page.Entries)-1].Kind == "ended" {
				return nil
			}
		}
		if page.NextCursor != "" {
			continue
		}
		select {
		case <-c.Context.Done():
			return nil
		case <-time.After(interval):
		}
	}
}

// printFollowed prints entries under --follow: rows of the table, or one document per entry
// (a JSON line; a YAML document after "---").
func printFollowed(c *cli.Context, entries []wire.LogEntry, header bool) error {
	if !structured(c) {
		w := newTable(c)
		if header {
			fmt.Fprintln(w, "SEQ\tAT\tKIND\tHOST\tDETAIL")
		}
		printLogEntries(w, entries)
		return w.Flush()
	}
	yaml := false
	if f, _ := outputFormat(c); f == "yaml" {
		yaml = true
	}
	for _, e := range entries {
		raw, err := json.Marshal(e)
		if err != nil {
			return err
		}
		if yaml {
			if _, err := io.WriteString(out(c), "---\n"); err != nil {
				return err
			}
			if err := writeYAML(out(c), raw); err != nil {
				return err
			}
			continue
		}
		if _, err := fmt.Fprintf(out(c), "%s\n", raw); err != nil {
			return err
		}
	}
	return nil
}

func printLogEntries(w io.Writer, entries []wire.LogEntry) {
	for _, e := range entries {
		detail := "-"
		if len(e.Detail) > 0 {
			detail = compactJSON(e.Detail)
		}
		fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\n", e.Seq, e.At.Format(time.RFC3339Nano), e.Kind, orDash(e.Host), detail)
	}
}

// logPageAfter reads the page of the log after cursor.
func logPageAfter(ctx context.Context, cl *client.Client, path string, cursor int64) (wire.LogPage, error) {
	q := url.Values{"limit": {"1000"}}
	if cursor > 0 {
		q.Set("cursor", strconv.FormatInt(cursor, 10))
	}
	raw, err := cl.Do(ctx, "GET", path+"?"+q.Encode(), nil)
	if err != nil {
		return wire.LogPage{}, err
	}
	var page wire.LogPage
	if err := json.Unmarshal(raw, &page); err != nil {
		return wire.LogPage{}, fmt.Errorf("decoding the server's response: %w", err)
	}
	return page, nil
}
