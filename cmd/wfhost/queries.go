package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/wfhost/wfhost/api/client"
	"github.com/wfhost/wfhost/api/wire"
)

// runsQueryCommand is `wfhost runs query WORKFLOW RUN_ID NAME [--arg JSON]`: POST
// .../runs/{id}/query/{name}, the workflow's answer from the run as it stands.
func runsQueryCommand() *cli.Command {
	return &cli.Command{
		Name: "query", ArgsUsage: "WORKFLOW RUN_ID NAME",
		Usage: "ask a live run a query: the handler its workflow registered answers from the run's state, and nothing of the run changes",
		Flags: clientFlags(
			&cli.StringFlag{Name: "arg", EnvVars: []string{"WFHOST_QUERY_ARG"}, Usage: "the query's argument: JSON, @FILE or - (default: none, which the workflow sees as null)"},
		),
		Action: func(c *cli.Context) error {
			a, err := args(c, "WORKFLOW", "RUN_ID", "NAME")
			if err != nil {
				return err
			}
			arg, err := jsonFlag(c, "arg")
			if err != nil {
				return err
			}
			cl, err := tenantClient(c)
			if err != nil {
				return err
			}
			var body any // none: no body, not the JSON null
			if arg != nil {
				body = arg
			}
			raw, err := cl.Do(c.Context, "POST", client.RunPath(a[0], a[1])+"/query/"+url.PathEscape(a[2]), body)
			if err != nil {
				return err
			}
			return render(c, raw, func(w *tabwriter.Writer, ans wire.QueryAnswer) {
				var out bytes.Buffer
				if json.Indent(&out, ans.Result, "", "  ") != nil {
					out.Reset()
					out.Write(ans.Result)
				}
				fmt.Fprintf(w, "%s\n", out.String())
			})
		},
	}
}
