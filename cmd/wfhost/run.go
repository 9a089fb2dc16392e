package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/urfave/cli/v2"

	"github.com/wfhost/wfhost/api"
	"github.com/wfhost/wfhost/engine"
	"github.com/wfhost/wfhost/host"
	"github.com/wfhost/wfhost/internal/defaults"
	"github.com/wfhost/wfhost/store"
	"github.com/wfhost/wfhost/store/embedded"
	"github.com/wfhost/wfhost/store/postgres"
)

// dbFlags choose the store: Postgres when --database-url is set, else the embedded SQLite
// store in --data-dir (a new user needs nothing else installed). The data-dir flag itself is
// each command's own.
func dbFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "database-url", EnvVars: []string{"WFHOST_DATABASE_URL"},
			Usage: "Postgres connection string (postgres://...); without it the embedded store in --data-dir is used"},
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
	flags := append(dbFlags(),
		&cli.StringFlag{Name: "listen", Value: "127.0.0.1:8080", EnvVars: []string{"WFHOST_LISTEN"}, Usage: "HTTP listen address"},
		dataDirFlag(),
		cacheDirFlag(),
		&cli.StringFlag{Name: "token", EnvVars: []string{"WFHOST_TOKEN"}, Usage: "a token of the default tenant, created if new (default: one kept in --data-dir/token)"},
		&cli.StringFlag{Name: "admin-token", EnvVars: []string{"WFHOST_ADMIN_TOKEN"}, Usage: "the token of the admin API (tenants and their tokens); without it the admin API is off"},
		&cli.StringFlag{Name: "owner", EnvVars: []string{"WFHOST_OWNER"}, Usage: "this host's name in leases (default: random)"},
		&cli.StringSliceFlag{Name: "deploy", EnvVars: []string{"WFHOST_DEPLOY"}, Usage: "deploy these .wasm modules at start"},
		&cli.StringFlag{Name: "log-level", Value: "info", EnvVars: []string{"WFHOST_LOG_LEVEL"}, Usage: "debug, info, warn or error"},
		&cli.StringFlag{Name: "log-format", Value: "text", EnvVars: []string{"WFHOST_LOG_FORMAT"}, Usage: "text or json"},
	)
	flags = append(flags, engineFlags()...)
	flags = append(flags, tenantLimitFlags()...)
	flags = append(flags, outboundFlags()...)
	flags = append(flags, telemetryFlags()...)
	flags = append(flags, secretKeyFlags()...)
	return &cli.Command{
		Name:   "run",
		Usage:  "run the daemon: REST API, activations, timers",
		Flags:  flags,
		Action: runDaemon,
	}
}

// engineFlags are the engine's own settings; their defaults are internal/defaults', which the
// engine takes for a zero field too.
func engineFlags() []cli.Flag {
	return []cli.Flag{
		&cli.IntFlag{Name: "concurrency", Value: defaults.Concurrency, EnvVars: []string{"WFHOST_CONCURRENCY"}, Usage: "activations running at once"},
		&cli.IntFlag{Name: "reserved-slots", EnvVars: []string{"WFHOST_RESERVED_SLOTS"},
			Usage: "slots beyond --concurrency kept for tenants with nothing in flight on this host (0: an eighth of --concurrency, at least 1; -1: none)"},
		&cli.IntFlag{Name: "tenant-starts", EnvVars: []string{"WFHOST_TENANT_STARTS"},
			Usage: "one tenant's starts in flight on this host at once while another tenant is about (0: twice the cores)"},
		&cli.IntFlag{Name: "tenant-cores", EnvVars: []string{"WFHOST_TENANT_CORES"}, Usage: "cores one tenant's guest code may occupy at once while another tenant is about (0: every core but one, so a tenant whose guests compute without pause leaves one to the others; a tenant alone is not bounded)"},
		&cli.DurationFlag{Name: "lease", Value: defaults.LeaseFor, EnvVars: []string{"WFHOST_LEASE"}, Usage: "how long a claim lasts without renewal; a crashed host's runs wait this long"},
		&cli.DurationFlag{Name: "poll-interval", Value: defaults.PollInterval, EnvVars: []string{"WFHOST_POLL_INTERVAL"}, Usage: "safety poll for work no notice announced"},
		&cli.DurationFlag{Name: "shutdown-grace", Value: defaults.ShutdownGrace, EnvVars: []string{"WFHOST_SHUTDOWN_GRACE"}, Usage: "how long SIGTERM lets activations finish before releasing them"},
		&cli.IntFlag{Name: "fault-limit", Value: defaults.FaultLimit, EnvVars: []string{"WFHOST_FAULT_LIMIT"}, Usage: "activations in a row that may end in a fault (store errors, a host dying) without journal progress before the run fails with no_progress"},
		&cli.IntFlag{Name: "park-memory-mib", Value: int(defaults.ParkMemory() >> 20), EnvVars: []string{"WFHOST_PARK_MEMORY_MIB"}, Usage: "memory (MiB) of the passes kept parked while their runs sleep or wait, resumed with no replay; least recently parked are evicted first (0: no parking; the default is a 32nd of this machine's memory, 64 MiB to 1 GiB)"},
		&cli.IntFlag{Name: "journal-window", Value: defaults.JournalWindow, EnvVars: []string{"WFHOST_JOURNAL_WINDOW"}, Usage: "the most journal entries a claim reads per run; a replay reads the rest a page of this many at a time"},
		&cli.IntFlag{Name: "snapshot-every", Value: defaults.SnapshotEvery, EnvVars: []string{"WFHOST_SNAPSHOT_EVERY"}, Usage: "journal entries between durable snapshots of a guest, so a recovery replays at most this many (0: none); needs binaryen's wasm-opt (--wasm-opt)"},
		&cli.StringFlag{Name: "wasm-opt", Value: "wasm-opt", EnvVars: []string{"WFHOST_WASM_OPT"}, Usage: "binaryen's wasm-opt, which makes modules snapshottable at upload (a name looked up in PATH, or a path; \"\": no snapshots, every run replays its journal from the top)"},
		&cli.DurationFlag{Name: "park-horizon", Value: defaults.ParkHorizon, EnvVars: []string{"WFHOST_PARK_HORIZON"}, Usage: "the furthest ahead a sleep's or a retry backoff's wake-up may be for its pass to be parked (a wait for an event parks whatever its timeout)"},
		&cli.IntFlag{Name: "default-retention-days", Value: defaults.DefaultRetentionDays, EnvVars: []string{"WFHOST_DEFAULT_RETENTION_DAYS"}, Usage: "retention of runs whose workflow and start request set none"},
		&cli.IntFlag{Name: "max-retention-days", Value: defaults.MaxRetentionDays, EnvVars: []string{"WFHOST_MAX_RETENTION_DAYS"}, Usage: "ceiling on every run's retention"},
		&cli.DurationFlag{Name: "schedule-poll", Value: engine.DefaultSchedulePoll, EnvVars: []string{"WFHOST_SCHEDULE_POLL"}, Usage: "the longest the scheduler sleeps between looks at the store: how late this host sees a schedule created or resumed on another host, or a buffered fire time whose run ended"},
		&cli.DurationFlag{Name: "sweeper-interval", Value: defaults.SweepInterval, EnvVars: []string{"WFHOST_SWEEPER_INTERVAL"}, Usage: "how often terminal runs past their retention (and broadcast events past their window) are deleted, and children a parent's end left running are cancelled"},
		&cli.DurationFlag{Name: "run-states-interval", Value: defaults.RunStatesInterval, EnvVars: []string{"WFHOST_RUN_STATES_INTERVAL"}, Usage: "the least time between two counts of the store's live runs by state for the wfhost_runs gauge (at least 1s); scrapes in between serve the last count"},
		&cli.DurationFlag{Name: "broadcast-window", Value: defaults.BroadcastWindow, EnvVars: []string{"WFHOST_BROADCAST_WINDOW"}, Usage: "how long a broadcast event is kept for waits reached after it, and how long its event id deduplicates"},
	}
}

// engineConfig is the engine's configuration from the flags, without what the daemon opens
// (store, runtime, telemetry, keys). engine.New checks the settings the flags do not.
func engineConfig(c *cli.Context, log *slog.Logger) (engine.Config, error) {
	limits, err := tenantDefaults(c)
	if err != nil {
		return engine.Config{}, err
	}
	// Below a second the count of live runs would be made at nearly every scrape: the bound
	// it is for would be gone.
	if d := c.Duration("run-states-interval"); d < time.Second {
		return engine.Config{}, fmt.Errorf("--run-states-interval must be at least 1s, not %s", d)
	}
	parkMiB := c.Int("park-memory-mib")
	if parkMiB < 0 || parkMiB > 1<<20 {
		return engine.Config{}, fmt.Errorf("--park-memory-mib must be from 0 (no parking) to %d, not %d", 1<<20, parkMiB)
	}
	parkMemory := int64(parkMiB) << 20
	if parkMiB == 0 {
		parkMemory = -1 // the engine's "off"; its zero is "the default"
	}
	snapshotEvery := c.Int("snapshot-every")
	if snapshotEvery < 0 || snapshotEvery > 1_000_000 {
		return engine.Config{}, fmt.Errorf("--snapshot-every must be from 0 (none) to 1000000, not %d", snapshotEvery)
	}
	if snapshotEvery == 0 {
		snapshotEvery = -1 // the engine's "off"; its zero is "the default"
	}
	if w := c.Int("journal-window"); w < 1 || w > 1_000_000 {
		return engine.Config{}, fmt.Errorf("--journal-window must be from 1 to 1000000, not %d", w)
	}
	// The slots and starts flags, named here: the engine's own check names its fields.
	concurrency := c.Int("concurrency")
	if concurrency < 1 || concurrency > 100_000 {
		return engine.Config{}, fmt.Errorf("--concurrency must be from 1 to 100000, not %d", concurrency)
	}
	if r := c.Int("reserved-slots"); r < -1 || r > concurrency {
		return engine.Config{}, fmt.Errorf("--reserved-slots must be -1 (none), 0 (an eighth of --concurrency) or at most --concurrency (%d), not %d", concurrency, r)
	}
	if n := c.Int("tenant-starts"); n < 0 || n > 100_000 {
		return engine.Config{}, fmt.Errorf("--tenant-starts must be from 0 (twice the cores) to 100000, not %d", n)
	}
	if c.Duration("park-horizon") <= 0 {
		return engine.Config{}, fmt.Errorf("--park-horizon must be positive, not %v", c.Duration("park-horizon"))
	}
	return withOutbound(c, log, engine.Config{
		Logger:               log,
		Owner:                c.String("owner"),
		Concurrency:          c.Int("concurrency"),
		ReservedSlots:        c.Int("reserved-slots"),
		TenantStarts:         c.Int("tenant-starts"),
		LeaseFor:             c.Duration("lease"),
		PollInterval:         c.Duration("poll-interval"),
		ShutdownGrace:        c.Duration("shutdown-grace"),
		FaultLimit:           c.Int("fault-limit"),
		ParkMemory:           parkMemory,
		ParkHorizon:          c.Duration("park-horizon"),
		SnapshotEvery:        snapshotEvery,
		JournalWindow:        c.Int("journal-window"),
		TenantDefaults:       limits,
		DefaultRetentionDays: c.Int("default-retention-days"),
		MaxRetentionDays:     c.Int("max-retention-days"),
		SweepInterval:        c.Duration("sweeper-interval"),
		SchedulePoll:         c.Duration("schedule-poll"),
		RunStatesInterval:    c.Duration("run-states-interval"),
		BroadcastWindow:      c.Duration("broadcast-window"),
	})
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

// cacheDirFlag names where compiled modules are kept when that should not be under the data
// directory: a faster disk, or one cache shared by several data directories (the CLI's tests
// share one, so that each test does not compile the same fixtures again under -race).
// Compiled code is keyed by the module's digest and wazero's version, so sharing is safe.
func cacheDirFlag() cli.Flag {
	return &cli.StringFlag{Name: "cache-dir", EnvVars: []string{"WFHOST_CACHE_DIR"},
		Usage: "where compiled modules are kept (default: a directory under --data-dir)"}
}

// compileCacheDir is --cache-dir, or the directory sub of the data directory.
func compileCacheDir(c *cli.Context, sub string) string {
	if dir := c.String("cache-dir"); dir != "" {
		return dir
	}
	return filepath.Join(c.String("data-dir"), sub)
}

func dataDirFlag() cli.Flag {
	return &cli.StringFlag{Name: "data-dir", Value: defaultDataDir(), EnvVars: []string{"WFHOST_DATA_DIR"},
		Usage: "the daemon's directory: the embedded store (without --database-url), compiled modules, the default token"}
}

// daemonStore is a store the daemon can also check for readiness.
type daemonStore interface {
	store.Store
	api.StoreHealth
}

// openStore opens and migrates the store the flags choose, and says which it is for logs.
func openStore(ctx context.Context, c *cli.Context) (daemonStore, string, error) {
	if url := c.String("database-url"); url != "" {
		st, err := postgres.Open(ctx, postgres.Config{URL: url, Schema: c.String("schema")})
		if err != nil {
			return nil, "", err
		}
		if err := st.Migrate(ctx); err != nil {
			st.Close()
			return nil, "", err
		}
		return st, "postgres schema " + st.Schema(), nil
	}
	// The embedded store migrates itself at open, under its directory lock.
	st, err := embedded.Open(ctx, embedded.Config{Dir: c.String("data-dir")})
	if err != nil {
		return nil, "", err
	}
	return st, "embedded " + filepath.Join(st.Dir(), embedded.DBFile), nil
}

func runDaemon(c *cli.Context) error {
	log, err := newLogger(c)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(c.Context, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	// The flags first: a mistake in one is a startup error before anything is opened.
	cfg, err := engineConfig(c, log)
	if err != nil {
		return err
	}

	st, storeName, err := openStore(ctx, c)
	if err != nil {
		return err
	}
	defer st.Close()
	if pg, ok := st.(*postgres.Store); ok {
		if off, err := pg.AutovacuumOff(ctx); err == nil && off {
			log.Warn("the Postgres server's autovacuum is off: the claim and journal queries slow down as runs pile up (stale statistics, dead rows); turn it on, or VACUUM ANALYZE the wfhost tables regularly")
		}
	}
	// The host refuses modules over its own bound before any tenant's limit is asked; it is
	// raised with --max-module-bytes, so the default limit can be above 32 MiB.
	rt, err := host.NewRuntime(ctx, host.Config{CacheDir: compileCacheDir(c, "cache"), Logger: log, TenantCores: c.Int("tenant-cores"),
		MaxModuleBytes: max(cfg.TenantDefaults.MaxModuleBytes, defaults.MaxModuleBytes),
		Snapshots:      snapshotConfig(c, cfg, log)})
	if err != nil {
		return err
	}
	defer rt.Close(context.Background())

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	tp, shutdownTracing, err := newTracerProvider(ctx, c.String("otlp-endpoint"), c.String("owner"))
	if err != nil {
		return err
	}
	defer func() {
		// After the engine stopped: the spans of the activations it drained go out too.
		flushCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := shutdownTracing(flushCtx); err != nil {
			log.Warn("flush traces", "err", err)
		}
	}()
	secretKeys, err := loadSecretKeys(ctx, c, st, log)
	if err != nil {
		return err
	}
	cfg.Store, cfg.Runtime, cfg.Metrics, cfg.TracerProvider, cfg.SecretKeys = st, rt, reg, tp, secretKeys
	cfg.Version = version()
	eng, err := engine.New(cfg)
	if err != nil {
		return err
	}
	tokenSource, err := ensureDefaultToken(ctx, c, eng.Service)
	if err != nil {
		return err
	}
	var deployed []string
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
		for _, w := range res.Workflows {
			deployed = append(deployed, w.Name)
		}
	}

	handler := api.New(api.Config{
		Service: eng.Service, Store: st, Logger: log, Gatherer: reg, AdminToken: c.String("admin-token"),
		Ready: api.StoreReady(st), TracerProvider: tp,
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
	log.Info("wfhost is ready", "listen", ln.Addr().String(), "owner", eng.Owner(), "store", storeName,
		"default_tenant_token", tokenSource, "admin_api", c.String("admin-token") != "")
	printTryIt(c, log, ln.Addr().String(), deployed)

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
func ensureDefaultToken(ctx context.Context, c *cli.Context, eng *engine.Service) (string, error) {
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
		Flags: append(dbFlags(), dataDirFlag()),
		Action: func(c *cli.Context) error {
			st, name, err := openStore(c.Context, c)
			if err != nil {
				return err
			}
			st.Close()
			if c.String("database-url") == "" {
				fmt.Println("the embedded store is up to date:", name, "(wfhost run applies its migrations itself; this command is only needed for Postgres)")
				return nil
			}
			fmt.Println("migrations applied to", name)
			return nil
		},
	}
}

// printTryIt tells a new user, once the daemon is ready, how to start a run and watch it. The
// commands name this binary as it was invoked (bin/wfhost under make run) and carry the
// flags a client needs to reach a daemon not on the defaults.
func printTryIt(c *cli.Context, log *slog.Logger, addr string, deployed []string) {
	if len(deployed) == 0 {
		return
	}
	bin := os.Args[0]
	var extra string
	if addr != "127.0.0.1:8080" {
		extra += " --url http://" + addr
	}
	if c.String("token") == "" && c.String("data-dir") != defaultDataDir() {
		extra += " --data-dir " + c.String("data-dir")
	}
	workflow, input := deployed[0], "{}"
	if slices.Contains(deployed, "steps") {
		workflow, input = "steps", `{"n":3}`
	}
	start := fmt.Sprintf("%s start %s --input '%s' --wait%s", bin, workflow, input, extra)
	watch := fmt.Sprintf("%s runs list --workflow %s%s", bin, workflow, extra)
	steps := fmt.Sprintf("%s runs steps %s RUN_ID%s", bin, workflow, extra)
	// The web console signs in with the same token the CLI reads: say where it is.
	console := "http://" + addr + "/ui"
	signIn := "sign in with the --token you gave"
	if c.String("token") == "" {
		signIn = "sign in with the token in " + tokenFile(c.String("data-dir"))
	}
	if c.String("log-format") == "json" {
		log.Info("try it", "start", start, "list", watch, "journal", steps, "console", console, "console_sign_in", signIn)
		return
	}
	fmt.Fprintf(os.Stderr, "\nTry it, in another terminal:\n  %s\n  %s\n  %s\nor in a browser: %s (%s)\n\n",
		start, watch, steps, console, signIn)
}

// snapshotConfig turns the host's snapshots on when they are asked for and wasm-opt is found;
// without it every run replays its journal from the top, which is only slower.
func snapshotConfig(c *cli.Context, cfg engine.Config, log *slog.Logger) host.SnapshotConfig {
	name := c.String("wasm-opt")
	if cfg.SnapshotEvery < 0 || name == "" {
		log.Info("durable snapshots are off: runs replay their journals from the top")
		return host.SnapshotConfig{}
	}
	path, err := exec.LookPath(name)
	if err != nil {
		log.Warn("durable snapshots are off: binaryen's wasm-opt was not found (apt-get install binaryen, or --wasm-opt PATH); runs replay their journals from the top", "wasm_opt", name)
		return host.SnapshotConfig{}
	}
	log.Info("durable snapshots are on", "wasm_opt", path, "every", cfg.SnapshotEvery)
	return host.SnapshotConfig{WasmOpt: path}
}
