package main

import (
	"fmt"
	"log/slog"

	"github.com/urfave/cli/v2"

	"github.com/wfhost/wfhost/engine"
	"github.com/wfhost/wfhost/host"
)

// outboundFlags are the daemon's settings for the outbound HTTP of step callbacks. Their
// defaults are host.DefaultOutbound's (internal/defaults).
func outboundFlags() []cli.Flag {
	defaults := host.DefaultOutbound()
	return []cli.Flag{
		&cli.BoolFlag{Name: "allow-private-hosts", EnvVars: []string{"WFHOST_ALLOW_PRIVATE_HOSTS"},
			Usage: "DANGEROUS, for local development only: let outbound HTTP reach loopback, private and link-local addresses " +
				"(this machine, its network, cloud metadata) for every tenant whose allowlist names them"},
		&cli.IntFlag{Name: "http-max-request-bytes", Value: defaults.MaxRequestBytes, EnvVars: []string{"WFHOST_HTTP_MAX_REQUEST_BYTES"},
			Usage: "largest request body a step may send"},
		&cli.IntFlag{Name: "http-max-response-bytes", Value: defaults.MaxResponseBytes, EnvVars: []string{"WFHOST_HTTP_MAX_RESPONSE_BYTES"},
			Usage: "largest response body a step may receive"},
		&cli.DurationFlag{Name: "http-timeout", Value: defaults.Timeout, EnvVars: []string{"WFHOST_HTTP_TIMEOUT"},
			Usage: "time limit of one outbound request, its redirects included"},
		&cli.IntFlag{Name: "http-max-redirects", Value: defaults.MaxRedirects, EnvVars: []string{"WFHOST_HTTP_MAX_REDIRECTS"},
			Usage: "most redirects one outbound request follows, each checked against the allowlist"},
	}
}

// withOutbound is cfg with the outbound flags applied; it says loudly when private addresses
// are allowed, since then every tenant can reach the daemon's own network.
func withOutbound(c *cli.Context, log *slog.Logger, cfg engine.Config) (engine.Config, error) {
	for _, name := range []string{"http-max-request-bytes", "http-max-response-bytes", "http-max-redirects"} {
		if c.Int(name) < 1 {
			return cfg, fmt.Errorf("--%s must be at least 1", name)
		}
	}
	if c.Duration("http-timeout") <= 0 {
		return cfg, fmt.Errorf("--http-timeout must be positive")
	}
	cfg.AllowPrivateHosts = c.Bool("allow-private-hosts")
	cfg.MaxHTTPRequestBytes = c.Int("http-max-request-bytes")
	cfg.MaxHTTPResponseBytes = c.Int("http-max-response-bytes")
	cfg.HTTPTimeout = c.Duration("http-timeout")
	cfg.MaxHTTPRedirects = c.Int("http-max-redirects")
	if cfg.AllowPrivateHosts {
		log.Warn("--allow-private-hosts is on: tenants may reach loopback, private and link-local addresses their allowlists name; never use it in production")
	}
	return cfg, nil
}
