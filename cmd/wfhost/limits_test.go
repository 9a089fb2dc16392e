package main

import (
	"context"
	"log/slog"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/wfhost/wfhost/engine"
	"github.com/wfhost/wfhost/internal/testenv"
	"github.com/wfhost/wfhost/store"
	"github.com/wfhost/wfhost/store/embedded"
)

// effectiveLimits runs `wfhost run`'s flags over args into the engine configuration the
// daemon would build, and returns the limits the engine then applies to a tenant without
// limits of its own.
func effectiveLimits(t *testing.T, args ...string) (store.Limits, error) {
	t.Helper()
	var (
		limits store.Limits
		err    error
	)
	app := &cli.App{Name: "wfhost", Commands: []*cli.Command{{Name: "run", Flags: runCommand().Flags, Action: func(c *cli.Context) error {
		var cfg engine.Config
		if cfg, err = engineConfig(c, slog.New(slog.DiscardHandler)); err != nil {
			return nil
		}
		ctx := context.Background()
		st, openErr := embedded.Open(ctx, embedded.Config{Dir: t.TempDir()})
		if openErr != nil {
			t.Fatal(openErr)
		}
		defer st.Close()
		cfg.Store, cfg.Runtime = st, testenv.Runtime(t)
		eng, newErr := engine.New(cfg)
		if newErr != nil {
			t.Fatalf("engine.New with the flags' configuration: %v", newErr)
		}
		if _, _, _, err := eng.CreateTenant(ctx, "plain", store.Limits{}); err != nil {
			t.Fatal(err)
		}
		limits, err = eng.Limits(ctx, "plain")
		return err
	}}}}
	if runErr := app.Run(append([]string{"wfhost", "run"}, args...)); runErr != nil {
		t.Fatalf("%v: %v", args, runErr)
	}
	return limits, err
}

// TestEveryTenantLimitIsAFlag: each tenant limit has a `wfhost run` flag and a WFHOST_*
// variable, whose value becomes the engine's effective limit of a tenant without its own;
// with none given the engine's defaults apply; a value an admin could not set is a startup
// error naming the flag.
func TestEveryTenantLimitIsAFlag(t *testing.T) {
	// Not parallel: t.Setenv, and urfave/cli keeps package-level state.
	cleanEnv(t)
	want := store.Limits{
		MemoryPages: 300, ActivationTimeoutMs: 90_000, Concurrency: 7, MaxModuleBytes: 5 << 20,
		MaxInputBytes: 1001, MaxOutputBytes: 1002, MaxStepOutputBytes: 1003, MaxEventBytes: 1004,
		MaxStepsPerRun: 1005, MaxBufferedEvents: 1006, AllowedHosts: []string{"api.example.com", "*.example.org"},
	}
	// Every limit is set above, so a limit added to store.Limits without a flag fails here.
	for i, v := 0, reflect.ValueOf(want); i < v.NumField(); i++ {
		if v.Field(i).IsZero() {
			t.Fatalf("the test sets no value for store.Limits.%s", v.Type().Field(i).Name)
		}
	}
	covered := []string{"activationTimeoutMs"}
	for _, l := range intLimits(&store.Limits{}) {
		covered = append(covered, l.name)
	}
	for _, r := range engine.LimitRanges() {
		if !slices.Contains(covered, r.Name) {
			t.Errorf("the tenant limit %s has no wfhost run flag", r.Name)
		}
	}

	var args []string
	for _, l := range intLimits(&want) {
		args = append(args, "--"+l.flag, strconv.Itoa(*l.field))
	}
	args = append(args, "--activation-timeout", "90s", "--allowed-hosts", "api.example.com", "--allowed-hosts", "*.example.org")
	if got, err := effectiveLimits(t, args...); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("with %v the engine applies %+v (%v), want %+v", args, got, err, want)
	}

	if got, err := effectiveLimits(t); err != nil || !reflect.DeepEqual(got, engine.DefaultTenantLimits()) {
		t.Fatalf("without flags the engine applies %+v (%v), want its defaults %+v", got, err, engine.DefaultTenantLimits())
	}

	for _, l := range intLimits(&want) {
		t.Setenv(envVar(l.flag)[0], strconv.Itoa(*l.field))
	}
	t.Setenv("WFHOST_ACTIVATION_TIMEOUT", "90s")
	t.Setenv("WFHOST_ALLOWED_HOSTS", "api.example.com,*.example.org")
	if got, err := effectiveLimits(t); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("with WFHOST_* variables the engine applies %+v (%v), want %+v", got, err, want)
	}
	cleanEnv(t)

	bad := [][]string{
		{"--activation-timeout", "0s"}, {"--activation-timeout", "500us"}, {"--activation-timeout", "2h"},
		{"--allowed-hosts", "exa mple.com"},
	}
	for _, l := range intLimits(&store.Limits{}) {
		bad = append(bad, []string{"--" + l.flag, "-1"}, []string{"--" + l.flag, "0"},
			[]string{"--" + l.flag, strconv.FormatInt(limitMax(l.name)+1, 10)})
	}
	for _, args := range bad {
		if _, err := effectiveLimits(t, args...); err == nil || !strings.Contains(err.Error(), args[0]) {
			t.Errorf("%v: %v, want a startup error naming %s", args, err, args[0])
		}
	}
}

// TestEngineFlagsAreChecked: --snapshot-every, --journal-window, --run-states-interval and
// the slots and starts flags out of their ranges are startup errors naming the flag.
func TestEngineFlagsAreChecked(t *testing.T) {
	for _, tc := range []struct{ args []string }{
		{[]string{"--concurrency", "0"}},
		{[]string{"--reserved-slots", "-5"}},
		{[]string{"--reserved-slots", "33"}},
		{[]string{"--tenant-starts", "-1"}},
		{[]string{"--snapshot-every", "-1"}},
		{[]string{"--snapshot-every", "1000001"}},
		{[]string{"--journal-window", "0"}},
		{[]string{"--journal-window", "-3"}},
		{[]string{"--run-states-interval", "10ms"}},
		{[]string{"--run-states-interval", "-1s"}},
	} {
		_, err := effectiveLimits(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.args[0]) {
			t.Errorf("%v: %v, want an error naming %s", tc.args, err, tc.args[0])
		}
	}
	if _, err := effectiveLimits(t, "--snapshot-every", "0", "--journal-window", "50"); err != nil {
		t.Errorf("snapshots off and a window of 50: %v", err)
	}
	if _, err := effectiveLimits(t, "--concurrency", "4", "--reserved-slots", "4", "--tenant-starts", "1"); err != nil {
		t.Errorf("4 slots, 4 reserved, one start at a time: %v", err)
	}
	if _, err := effectiveLimits(t, "--reserved-slots", "-1"); err != nil {
		t.Errorf("no reserved slots: %v", err)
	}
	if _, err := effectiveLimits(t, "--run-states-interval", "1m"); err != nil {
		t.Errorf("a count a minute: %v", err)
	}
}
