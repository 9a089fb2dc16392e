package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/wfhost/wfhost/engine"
	"github.com/wfhost/wfhost/host"
	"github.com/wfhost/wfhost/store"
)

// The daemon's default of every tenant limit (store.Limits), one `wfhost run` flag each; a
// tenant's own limits (tenants set-limits) override them. The flags' values are the engine's
// defaults (engine.DefaultTenantLimits, which reads internal/defaults), so nothing is written
// here twice, and each is checked against the range an admin's value must be in
// (engine.LimitRanges()) before the daemon starts.

// intLimit is a tenant limit that is a whole number, with the flag that sets its default.
type intLimit struct {
	name  string // the limit's JSON name, as the API and engine.LimitRanges() call it
	flag  string
	usage string
	field *int
}

// intLimits are l's whole-number limits by their flags. activationTimeoutMs (a duration,
// --activation-timeout) and allowedHosts (a list, --allowed-hosts) have flags of their own.
func intLimits(l *store.Limits) []intLimit {
	return []intLimit{
		{"memoryPages", "memory-pages", "memory limit of an instance, in 64 KiB pages", &l.MemoryPages},
		{"concurrency", "tenant-concurrency", "cap on one tenant's activations at once, over all hosts", &l.Concurrency},
		{"maxModuleBytes", "max-module-bytes", "largest module a tenant may deploy, in bytes", &l.MaxModuleBytes},
		{"maxInputBytes", "max-input-bytes", "largest run input, in bytes", &l.MaxInputBytes},
		{"maxOutputBytes", "max-output-bytes", "largest run output, in bytes", &l.MaxOutputBytes},
		{"maxStepOutputBytes", "max-step-output-bytes", "largest step output, in bytes", &l.MaxStepOutputBytes},
		{"maxEventBytes", "max-event-bytes", "largest event payload, in bytes", &l.MaxEventBytes},
		{"maxStepsPerRun", "max-steps-per-run", "most journal entries a run may have", &l.MaxStepsPerRun},
		{"maxBufferedEvents", "max-buffered-events", "most events kept for a run before a wait takes them", &l.MaxBufferedEvents},
	}
}

// envVar is the environment variable of a flag: WFHOST_ and its name in capitals.
func envVar(flag string) []string {
	return []string{"WFHOST_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))}
}

func tenantLimitFlags() []cli.Flag {
	defaults := engine.DefaultTenantLimits()
	var flags []cli.Flag
	for _, l := range intLimits(&defaults) {
		flags = append(flags, &cli.IntFlag{Name: l.flag, Value: *l.field, EnvVars: envVar(l.flag),
			Usage: "default " + l.usage + ", for every tenant without its own (" + l.name + ")"})
	}
	return append(flags,
		&cli.DurationFlag{Name: "activation-timeout", Value: time.Duration(defaults.ActivationTimeoutMs) * time.Millisecond,
			EnvVars: envVar("activation-timeout"), Usage: "default wall-time limit of one activation, for every tenant without its own (activationTimeoutMs)"},
		&cli.StringSliceFlag{Name: "allowed-hosts", EnvVars: envVar("allowed-hosts"),
			Usage: "default outbound HTTP allowlist, for every tenant without its own (allowedHosts: api.example.com, *.example.com, https://api.example.com:8443; ABI.md §4.11); " +
				"repeat the flag or separate with commas; none by default"},
	)
}

// tenantDefaults reads the tenant limit flags, refusing a value an admin could not set: each
// number within engine.LimitRanges() and at least 1 (0 would be no limit at all), each host an
// allowlist entry.
func tenantDefaults(c *cli.Context) (store.Limits, error) {
	var l store.Limits
	for _, f := range intLimits(&l) {
		v := c.Int(f.flag)
		if top := limitMax(f.name); v < 1 || int64(v) > top {
			return l, fmt.Errorf("--%s must be from 1 to %d, not %d", f.flag, top, v)
		}
		*f.field = v
	}
	timeout := c.Duration("activation-timeout")
	if top := time.Duration(limitMax("activationTimeoutMs")) * time.Millisecond; timeout < time.Millisecond || timeout > top {
		return l, fmt.Errorf("--activation-timeout must be from 1ms to %v, not %v", top, timeout)
	}
	l.ActivationTimeoutMs = timeout.Milliseconds()
	if hosts := c.StringSlice("allowed-hosts"); len(hosts) > 0 {
		if err := host.CheckAllowedHosts(hosts); err != nil {
			return l, fmt.Errorf("--allowed-hosts: %w", err)
		}
		l.AllowedHosts = hosts
	}
	return l, nil
}

// limitMax is the largest value an admin may give the limit named name.
func limitMax(name string) int64 {
	for _, r := range engine.LimitRanges() {
		if r.Name == name {
			return r.Max
		}
	}
	panic("no engine.LimitRanges() entry for limit " + name)
}
