package main

import (
	"bytes"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/wfhost/wfhost/engine"
	"github.com/wfhost/wfhost/host"
)

// outboundConfig runs the outbound flags over args and returns the engine configuration they
// make and what was logged.
func outboundConfig(t *testing.T, args ...string) (engine.Config, string, error) {
	t.Helper()
	var (
		cfg  engine.Config
		logs bytes.Buffer
		err  error
	)
	app := &cli.App{Name: "wfhost", Commands: []*cli.Command{{Name: "run", Flags: outboundFlags(), Action: func(c *cli.Context) error {
		cfg, err = withOutbound(c, slog.New(slog.NewTextHandler(&logs, nil)), engine.Config{})
		return nil
	}}}}
	if runErr := app.Run(append([]string{"wfhost", "run"}, args...)); runErr != nil {
		t.Fatalf("%v: %v", args, runErr)
	}
	return cfg, logs.String(), err
}

// TestOutboundFlags: the daemon's outbound settings are flags of wfhost run (and WFHOST_*
// variables) whose defaults are host.DefaultOutbound's; private addresses stay refused unless
// --allow-private-hosts says otherwise, which is logged as a warning.
func TestOutboundFlags(t *testing.T) {
	// Not parallel: t.Setenv.
	var names []string
	for _, f := range runCommand().Flags {
		names = append(names, f.Names()...)
	}
	for _, want := range []string{"allow-private-hosts", "http-max-request-bytes", "http-max-response-bytes", "http-timeout", "http-max-redirects"} {
		if !slices.Contains(names, want) {
			t.Errorf("wfhost run has no --%s", want)
		}
	}

	cfg, logs, err := outboundConfig(t)
	defaults := host.DefaultOutbound()
	if err != nil || cfg.AllowPrivateHosts || cfg.MaxHTTPRequestBytes != defaults.MaxRequestBytes ||
		cfg.MaxHTTPResponseBytes != defaults.MaxResponseBytes || cfg.HTTPTimeout != defaults.Timeout || cfg.MaxHTTPRedirects != defaults.MaxRedirects || logs != "" {
		t.Fatalf("defaults: %+v %q %v", cfg, logs, err)
	}
	cfg, logs, err = outboundConfig(t, "--allow-private-hosts", "--http-max-request-bytes", "10", "--http-max-response-bytes", "20", "--http-timeout", "3s", "--http-max-redirects", "2")
	if err != nil || !cfg.AllowPrivateHosts || cfg.MaxHTTPRequestBytes != 10 || cfg.MaxHTTPResponseBytes != 20 || cfg.HTTPTimeout.String() != "3s" || cfg.MaxHTTPRedirects != 2 ||
		!strings.Contains(logs, "level=WARN") || !strings.Contains(logs, "allow-private-hosts") {
		t.Fatalf("flags: %+v %q %v", cfg, logs, err)
	}
	t.Setenv("WFHOST_ALLOW_PRIVATE_HOSTS", "true")
	if cfg, _, err = outboundConfig(t); err != nil || !cfg.AllowPrivateHosts {
		t.Fatalf("WFHOST_ALLOW_PRIVATE_HOSTS=true: %+v %v", cfg, err)
	}
	for _, bad := range [][]string{{"--http-max-request-bytes", "0"}, {"--http-max-response-bytes", "-1"}, {"--http-timeout", "0s"}, {"--http-max-redirects", "-1"}} {
		if _, _, err := outboundConfig(t, bad...); err == nil || !strings.Contains(err.Error(), bad[0]) {
			t.Errorf("%v: %v, want an error naming the flag", bad, err)
		}
	}
}
