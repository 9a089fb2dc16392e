package main

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/wfhost/wfhost/api/client"
)

// Tenants and their tokens. Tenants are the operator's (the admin token); tokens are both: a
// tenant manages its own with one of its tokens, and the operator any tenant's with --tenant.

type tenant struct {
	ID string `json:"id"`
	// Limits are raw so numbers print as sent and limits added to the server need no change here.
	Limits          map[string]json.RawMessage `json:"limits"`
	EffectiveLimits map[string]json.RawMessage `json:"effectiveLimits"`
	CreatedAt       time.Time                  `json:"createdAt"`
}

type token struct {
	ID        string     `json:"id"`
	Tenant    string     `json:"tenant"`
	Name      string     `json:"name"`
	CreatedAt time.Time  `json:"createdAt"`
	RevokedAt *time.Time `json:"revokedAt"`
	Secret    string     `json:"secret"`
}

func limitsFlag(required bool) cli.Flag {
	return &cli.StringFlag{Name: "limits", Required: required, EnvVars: []string{"WFHOST_LIMITS"},
		Usage: `the tenant's own limits, a JSON object such as {"concurrency": 5, "memoryPages": 256}; unset ones follow the daemon's defaults`}
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
					type created struct {
						Tenant tenant `json:"tenant"`
						Token  token  `json:"token"`
					}
					return render(c, raw, func(w *tabwriter.Writer, res created) {
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
					type tenants struct {
						Tenants []tenant `json:"tenants"`
					}
					return render(c, raw, func(w *tabwriter.Writer, ts tenants) {
						fmt.Fprintln(w, "ID\tCREATED\tLIMITS")
						for _, t := range ts.Tenants {
							var own []string
							for _, k := range sortedKeys(t.Limits) {
								own = append(own, k+"="+string(t.Limits[k]))
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
						return fmt.Errorf("--limits is required: a JSON object, {} to clear the tenant's own limits")
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
func printTenant(w *tabwriter.Writer, t tenant) {
	fmt.Fprintf(w, "tenant\t%s\ncreated\t%s\n", t.ID, timeText(t.CreatedAt))
	if len(t.EffectiveLimits) == 0 && len(t.Limits) == 0 {
		return
	}
	fmt.Fprintln(w, "\nLIMIT\tVALUE\tSET BY")
	effective := t.EffectiveLimits
	if effective == nil {
		effective = t.Limits
	}
	for _, k := range sortedKeys(effective) {
		by := "default"
		if _, ok := t.Limits[k]; ok {
			by = "tenant"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\n", k, effective[k], by)
	}
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
					body := map[string]any{}
					if n := c.String("name"); n != "" {
						body["name"] = n
					}
					raw, err := cl.Do(c.Context, "POST", path, body)
					if err != nil {
						return err
					}
					return render(c, raw, func(w *tabwriter.Writer, t token) {
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
					type tokens struct {
						Tokens []token `json:"tokens"`
					}
					return render(c, raw, func(w *tabwriter.Writer, ts tokens) {
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
					return render(c, raw, func(w *tabwriter.Writer, t token) {
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
