package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/urfave/cli/v2"

	"github.com/wfhost/wfhost/api"
	"github.com/wfhost/wfhost/engine"
	"github.com/wfhost/wfhost/host"
	"github.com/wfhost/wfhost/store"
	"github.com/wfhost/wfhost/store/postgres"
)

const defaultDatabaseURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

func dbFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "database-url", Value: defaultDatabaseURL, EnvVars: []string{"WFHOST_DATABASE_URL"}, Usage: "Postgres connection string"},
		&cli.StringFlag{Name: "schema", Value: "wfhost", EnvVars: []string{"WFHOST_SCHEMA"}, Usage: "Postgres schema holding wfhost's tables"},
	}
}

func defaultDataDir() string {
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "wfhost")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "share", "wfhost")
	}
	return ".wfhost"
}

func runCommand() *cli.Command {
	return &cli.Command{
		Name:  "run",
		Usage: "run the daemon: REST API, activations, timers",
		Flags: append(dbFlags(),
			&cli.StringFlag{Name: "listen", Value: "127.0.0.1:8080", EnvVars: []string{"WFHOST_LISTEN"}, Usage: "HTTP listen address"},
			&cli.StringFlag{Name: "data-dir", Value: defaultDataDir(), EnvVars: []string{"WFHOST_DATA_DIR"}, Usage: "where compiled modules are cached"},
			&cli.IntFlag{Name: "concurrency", Value: 32, EnvVars: []string{"WFHOST_CONCURRENCY"}, Usage: "activations running at once"},
			&cli.DurationFlag{Name: "lease", Value: 30 * time.Second, EnvVars: []string{"WFHOST_LEASE"}, Usage: "how long a claim lasts without renewal; a crashed host's runs wait this long"},
			&cli.DurationFlag{Name: "poll-interval", Value: 10 * time.Second, EnvVars: []string{"WFHOST_POLL_INTERVAL"}, Usage: "safety poll for work no notice announced"},
			&cli.DurationFlag{Name: "shutdown-grace", Value: 10 * time.Second, EnvVars: []string{"WFHOST_SHUTDOWN_GRACE"}, Usage: "how long SIGTERM lets activations finish before releasing them"},
			&cli.DurationFlag{Name: "activation-timeout", Value: host.DefaultLimits.WallTime, EnvVars: []string{"WFHOST_ACTIVATION_TIMEOUT"}, Usage: "default wall-time limit of one activation"},
			&cli.UintFlag{Name: "memory-pages", Value: uint(host.DefaultLimits.MemoryPages), EnvVars: []string{"WFHOST_MEMORY_PAGES"}, Usage: "default memory limit of an instance, in 64 KiB pages"},
			&cli.StringFlag{Name: "token", EnvVars: []string{"WFHOST_TOKEN"}, Usage: "a token of the default tenant, created if new (default: one kept in --data-dir/token)"},
			&cli.StringFlag{Name: "admin-token", EnvVars: []string{"WFHOST_ADMIN_TOKEN"}, Usage: "the token of the admin API (tenants and their tokens); without it the admin API is off"},
			&cli.IntFlag{Name: "default-retention-days", Value: 30, EnvVars: []string{"WFHOST_DEFAULT_RETENTION_DAYS"}, Usage: "retention of runs whose workflow and start request set none"},
			&cli.IntFlag{Name: "max-retention-days", Value: 365, EnvVars: []string{"WFHOST_MAX_RETENTION_DAYS"}, Usage: "ceiling on every run's retention"},
			&cli.DurationFlag{Name: "sweeper-interval", Value: 5 * time.Minute, EnvVars: []string{"WFHOST_SWEEPER_INTERVAL"}, Usage: "how often terminal runs past their retention are deleted"},
			&cli.IntFlag{Name: "tenant-concurrency", Value: 100, EnvVars: []string{"WFHOST_TENANT_CONCURRENCY"}, Usage: "default cap on one tenant's activations at once, over all hosts"},
			&cli.StringFlag{Name: "owner", EnvVars: []string{"WFHOST_OWNER"}, Usage: "this host's name in leases (default: random)"},
			&cli.StringSliceFlag{Name: "deploy", EnvVars: []string{"WFHOST_DEPLOY"}, Usage: "deploy these .wasm modules at start"},
			&cli.StringFlag{Name: "log-level", Value: "info", EnvVars: []string{"WFHOST_LOG_LEVEL"}, Usage: "debug, info, warn or error"},
			&cli.StringFlag{Name: "log-format", Value: "text", EnvVars: []string{"WFHOST_LOG_FORMAT"}, Usage: "text or json"},
		),
		Action: runDaemon,
	}
}

func newLogger(c *cli.Context) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.String("log-level"))); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	opts := &slog.HandlerOptions{Level: level}
	switch c.String("log-format") {
	case "json":
		return slog.New(slog.NewJSONHandler(os.Stderr, opts)), nil
	case "text":
		return slog.New(slog.NewTextHandler(os.Stderr, opts)), nil
	}
	return nil, fmt.Errorf("--log-format must be text or json, not %q", c.String("log-format"))
}

func openStore(ctx context.Context, c *cli.Context) (*postgres.Store, error) {
	st, err := postgres.Open(ctx, postgres.Config{URL: c.String("database-url"), Schema: c.String("schema")})
	if err != nil {
		return nil, err
	}
	if err := st.Migrate(ctx); err != nil {
		st.Close()
		return nil, err
	}
	return st, nil
}

func runDaemon(c *cli.Context) error {
	log, err := newLogger(c)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(c.Context, syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	st, err := openStore(ctx, c)
	if err != nil {
		return err
	}
	defer st.Close()
	rt, err := host.NewRuntime(ctx, host.Config{CacheDir: filepath.Join(c.String("data-dir"), "cache"), Logger: log})
	if err != nil {
		return err
	}
	defer rt.Close(context.Background())

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	eng, err := engine.New(engine.Config{
		Store: st, Runtime: rt, Logger: log, Metrics: reg,
		Owner:         c.String("owner"),
		Concurrency:   c.Int("concurrency"),
		LeaseFor:      c.Duration("lease"),
		PollInterval:  c.Duration("poll-interval"),
		ShutdownGrace: c.Duration("shutdown-grace"),
		TenantDefaults: store.Limits{
			ActivationTimeoutMs: c.Duration("activation-timeout").Milliseconds(),
			MemoryPages:         int(c.Uint("memory-pages")),
			Concurrency:         c.Int("tenant-concurrency"),
		},
		DefaultRetentionDays: c.Int("default-retention-days"),
		MaxRetentionDays:     c.Int("max-retention-days"),
		SweepInterval:        c.Duration("sweeper-interval"),
	})
	if err != nil {
		return err
	}
	tokenSource, err := ensureDefaultToken(ctx, c, eng)
	if err != nil {
		return err
	}
	for _, path := range c.StringSlice("deploy") {
		wasm, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("--deploy: %w", err)
		}
		res, err := eng.Deploy(ctx, store.DefaultTenant, wasm, false)
		if err != nil {
			return fmt.Errorf("--deploy %s: %w", path, err)
		}
		names := make([]string, 0, len(res.Workflows))
		for _, w := range res.Workflows {
			names = append(names, w.Name+"@"+w.Version)
		}
		log.Info("deployed module", "file", path, "digest", res.Module.Digest, "workflows", strings.Join(names, ","))
	}

	handler := api.New(api.Config{
		Engine: eng, Logger: log, Gatherer: reg, AdminToken: c.String("admin-token"),
		Ready: func(ctx context.Context) error {
			if err := st.Ping(ctx); err != nil {
				return fmt.Errorf("store unreachable: %w", err)
			}
			if ok, err := st.MigrationsCurrent(ctx); err != nil || !ok {
				return errors.New("store migrations are not current")
			}
			return nil
		},
	})
	ln, err := net.Listen("tcp", c.String("listen"))
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	if err := eng.Start(ctx); err != nil {
		return err
	}
	log.Info("wfhost is ready", "listen", ln.Addr().String(), "owner", eng.Owner(), "schema", st.Schema(),
		"default_tenant_token", tokenSource, "admin_api", c.String("admin-token") != "")

	select {
	case <-ctx.Done():
	case err := <-serveErr:
		eng.Stop()
		return fmt.Errorf("http server: %w", err)
	}
	log.Info("shutting down: draining the API, then finishing or releasing activations")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = srv.Shutdown(shutdownCtx)
	eng.Stop()
	log.Info("stopped")
	return nil
}

// tokenFile is where the daemon keeps the default tenant's token when none is given, and where
// the client commands look for it: a daemon and CLI on one machine work together with no
// setup, and nothing is ever served without a token.
func tokenFile(dataDir string) string { return filepath.Join(dataDir, "token") }

// ensureDefaultToken makes the default tenant and a token for it: --token when given, else the
// one in --data-dir/token, created on first start. Returns where the token came from.
func ensureDefaultToken(ctx context.Context, c *cli.Context, eng *engine.Engine) (string, error) {
	secret, source := c.String("token"), "--token"
	if secret == "" {
		path := tokenFile(c.String("data-dir"))
		source = path
		b, err := os.ReadFile(path)
		switch {
		case err == nil:
			secret = strings.TrimSpace(string(b))
		case errors.Is(err, os.ErrNotExist):
			secret, _ = engine.NewSecret()
			if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
				return "", fmt.Errorf("default token: %w", err)
			}
			if err := os.WriteFile(path, []byte(secret+"\n"), 0o600); err != nil {
				return "", fmt.Errorf("default token: %w", err)
			}
		default:
			return "", fmt.Errorf("default token: %w", err)
		}
		if secret == "" {
			return "", fmt.Errorf("default token: %s is empty; delete it to have a new token made", path)
		}
	}
	if err := eng.EnsureToken(ctx, store.DefaultTenant, secret, "default"); err != nil {
		return "", fmt.Errorf("default tenant token from %s: %w", source, err)
	}
	return source, nil
}

func migrateCommand() *cli.Command {
	return &cli.Command{
		Name:  "migrate",
		Usage: "apply the database migrations and exit",
		Flags: dbFlags(),
		Action: func(c *cli.Context) error {
			st, err := openStore(c.Context, c)
			if err != nil {
				return err
			}
			st.Close()
			fmt.Println("migrations applied to schema", c.String("schema"))
			return nil
		},
	}
}
