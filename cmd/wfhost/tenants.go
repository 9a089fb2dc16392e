package main

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/wfhost/wfhost/api/client"
	"github.com/wfhost/wfhost/api/wire"
)

// Tenants and their tokens. Tenants are the operator's (the admin token); tokens are both: a
// tenant manages its own with one of its tokens, and the operator any tenant's with --tenant.

// --limits goes to the server as given, not through wire.Limits: the server reads it strictly
// and names a misspelt or mistyped limit, where encoding/json here would match a key in any
// case and drop one it does not know.

func limitsFlag(required bool) cli.Flag {
	return &cli.StringFlag{Name: "limits", Required: required, EnvVars: []string{"WFHOST_LIMITS"},
		Usage: `the tenant's own limits, a JSON object such as {"concurrency": 5, "memoryPages": 256}; unset ones follow the daemon's defaults (@FILE or - reads it from a file or stdin)`}
}

func tenantsCommand() *cli.Command {
	return &cli.Command{
		Name: "tenants", Usage: "manage tenants (admin token)",
		Subcommands: []*cli.Command{
			{
				Name: "create", Usage: "create a tenant and its first token", ArgsUsage: "ID",
				Flags: adminFlags(limitsFlag(false)),
				Action: func(c *cli.Context) error {
					a, err := args(c, "ID")
					if err != nil {
						return err
					}
					limits, err := jsonObjectFlag(c, "limits")
					if err != nil {
						return err
					}
					cl, err := adminClient(c)
					if err != nil {
						return err
					}
					body := map[string]any{"id": a[0]}
					if limits != nil {
						body["limits"] = limits
					}
					raw, err := cl.Do(c.Context, "POST", "/v1/tenants", body)
					if err != nil {
						return err
					}
					return render(c, raw, func(w *tabwriter.Writer, res wire.TenantCreated) {
						printTenant(w, res.Tenant)
						fmt.Fprintf(w, "\ntoken\t%s\nsecret\t%s\n", res.Token.ID, res.Token.Secret)
						fmt.Fprintln(w, "\nThe secret is shown once, now: store it. Use it as --token or WFHOST_TOKEN.")
					})
				},
			},
			{
				Name: "list", Usage: "list tenants", Flags: adminFlags(),
				Action: func(c *cli.Context) error {
					if _, err := args(c); err != nil {
						return err
					}
					raw, err := adminCall(c, "GET", "/v1/tenants", nil)
					if err != nil {
						return err
					}
					return render(c, raw, func(w *tabwriter.Writer, ts wire.TenantPage) {
						fmt.Fprintln(w, "ID\tCREATED\tLIMITS")
						for _, t := range ts.Tenants {
							var own []string
							limits := limitValues(&t.Limits)
							for _, k := range sortedKeys(limits) {
								own = append(own, k+"="+limits[k])
							}
							fmt.Fprintf(w, "%s\t%s\t%s\n", t.ID, timeText(t.CreatedAt), orDash(strings.Join(own, " ")))
						}
					})
				},
			},
			{
				Name: "get", Usage: "show a tenant and the limits that apply to it; without ID, the tenant of --token",
				ArgsUsage: "[ID]", Flags: append(clientFlags(), adminTokenFlag()),
				Action: func(c *cli.Context) error {
					id, err := optionalArg(c, "ID")
					if err != nil {
						return err
					}
					var raw json.RawMessage
					if id == "" {
						raw, err = get(c, "/v1/tenant")
					} else {
						raw, err = adminCall(c, "GET", tenantPath(id), nil)
					}
					if err != nil {
						return err
					}
					return render(c, raw, printTenant)
				},
			},
			{
				Name: "set-limits", Usage: "replace a tenant's own limits", ArgsUsage: "ID",
				Flags: adminFlags(limitsFlag(true)),
				Action: func(c *cli.Context) error {
					a, err := args(c, "ID")
					if err != nil {
						return err
					}
					limits, err := jsonObjectFlag(c, "limits")
					if err != nil {
						return err
					}
					if limits == nil {
						return usagef("--limits is required: a JSON object, {} to clear the tenant's own limits")
					}
					raw, err := adminCall(c, "PATCH", tenantPath(a[0]), map[string]any{"limits": limits})
					if err != nil {
						return err
					}
					return render(c, raw, printTenant)
				},
			},
		},
	}
}

func tenantPath(id string) string { return "/v1/tenants/" + url.PathEscape(id) }

// adminCall calls an admin route.
func adminCall(c *cli.Context, method, path string, body any) (json.RawMessage, error) {
	cl, err := adminClient(c)
	if err != nil {
		return nil, err
	}
	return cl.Do(c.Context, method, path, body)
}

// printTenant shows each limit that applies with where it comes from: the tenant's own
// setting or the daemon's default.
func printTenant(w *tabwriter.Writer, t wire.Tenant) {
	fmt.Fprintf(w, "tenant\t%s\ncreated\t%s\n", t.ID, timeText(t.CreatedAt))
	own, effective := limitValues(&t.Limits), limitValues(t.EffectiveLimits)
	if len(effective) == 0 && len(own) == 0 {
		return
	}
	fmt.Fprintln(w, "\nLIMIT\tVALUE\tSET BY")
	if effective == nil {
		effective = own
	}
	for _, k := range sortedKeys(effective) {
		by := "default"
		if _, ok := own[k]; ok {
			by = "tenant"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\n", k, effective[k], by)
	}
}

// limitValues are the limits that are set, by their JSON names, as JSON text: the table
// names each limit as the API and --limits do. Nil for no limits.
func limitValues(l *wire.Limits) map[string]string {
	if l == nil {
		return nil
	}
	var fields map[string]json.RawMessage
	if b, err := json.Marshal(l); err != nil || json.Unmarshal(b, &fields) != nil {
		return nil
	}
	out := make(map[string]string, len(fields))
	for k, v := range fields {
		out[k] = string(v)
	}
	return out
}

func tokensCommand() *cli.Command {
	tenantFlag := &cli.StringFlag{Name: "tenant", EnvVars: []string{"WFHOST_TENANT"},
		Usage: "another tenant's tokens, with the admin token (default: the tenant of --token)"}
	flags := func(extra ...cli.Flag) []cli.Flag {
		return append(clientFlags(adminTokenFlag(), tenantFlag), extra...)
	}
	return &cli.Command{
		Name: "tokens", Usage: "manage API tokens",
		Subcommands: []*cli.Command{
			{
				Name: "create", Usage: "create a token; its secret is shown once",
				Flags: flags(&cli.StringFlag{Name: "name", EnvVars: []string{"WFHOST_TOKEN_NAME"}, Usage: "what the token is for, shown in tokens list"}),
				Action: func(c *cli.Context) error {
					if _, err := args(c); err != nil {
						return err
					}
					cl, path, err := tokensClient(c)
					if err != nil {
						return err
					}
					raw, err := cl.Do(c.Context, "POST", path, wire.CreateToken{Name: c.String("name")})
					if err != nil {
						return err
					}
					return render(c, raw, func(w *tabwriter.Writer, t wire.Token) {
						fmt.Fprintf(w, "token\t%s\ntenant\t%s\nname\t%s\nsecret\t%s\n", t.ID, t.Tenant, orDash(t.Name), t.Secret)
						fmt.Fprintln(w, "\nThe secret is shown once, now: store it. Use it as --token or WFHOST_TOKEN.")
					})
				},
			},
			{
				Name: "list", Usage: "list a tenant's tokens, revoked ones included", Flags: flags(),
				Action: func(c *cli.Context) error {
					if _, err := args(c); err != nil {
						return err
					}
					cl, path, err := tokensClient(c)
					if err != nil {
						return err
					}
					raw, err := cl.Do(c.Context, "GET", path, nil)
					if err != nil {
						return err
					}
					return render(c, raw, func(w *tabwriter.Writer, ts wire.TokenPage) {
						fmt.Fprintln(w, "ID\tNAME\tCREATED\tREVOKED")
						for _, t := range ts.Tokens {
							fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", t.ID, orDash(t.Name), timeText(t.CreatedAt), optionalTime(t.RevokedAt))
						}
					})
				},
			},
			{
				Name: "revoke", Usage: "revoke a token: requests with it fail from now on", ArgsUsage: "TOKEN_ID", Flags: flags(),
				Action: func(c *cli.Context) error {
					a, err := args(c, "TOKEN_ID")
					if err != nil {
						return err
					}
					cl, path, err := tokensClient(c)
					if err != nil {
						return err
					}
					raw, err := cl.Do(c.Context, "DELETE", path+"/"+url.PathEscape(a[0]), nil)
					if err != nil {
						return err
					}
					return render(c, raw, func(w *tabwriter.Writer, t wire.Token) {
						fmt.Fprintf(w, "token %s of tenant %s revoked at %s\n", t.ID, t.Tenant, optionalTime(t.RevokedAt))
					})
				},
			},
		},
	}
}

// tokensClient picks the route family: a tenant's own tokens with its token, or with --tenant
// any tenant's through the admin routes.
func tokensClient(c *cli.Context) (*client.Client, string, error) {
	if id := c.String("tenant"); id != "" {
		cl, err := adminClient(c)
		return cl, tenantPath(id) + "/tokens", err
	}
	cl, err := tenantClient(c)
	return cl, "/v1/tokens", err
}
