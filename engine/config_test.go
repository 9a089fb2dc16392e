package engine_test

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/wfhost/wfhost/engine"
	"github.com/wfhost/wfhost/host"
	"github.com/wfhost/wfhost/internal/testenv"
	"github.com/wfhost/wfhost/store"
	"github.com/wfhost/wfhost/store/embedded"
)

// TestTenantDefaultsAreCheckedAndOneSet: the engine's tenant defaults are the host's for the
// activation limits, a zero field takes them, and New refuses an operator's default that an
// admin could not set for a tenant (negative, past LimitRanges, a malformed allowed host),
// naming it: such a value used to become every tenant's limit.
func TestTenantDefaultsAreCheckedAndOneSet(t *testing.T) {
	t.Parallel()
	st, err := embedded.Open(context.Background(), embedded.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rt := testenv.Runtime(t)

	d, a := engine.DefaultTenantLimits(), host.DefaultLimits()
	if d.MemoryPages != int(a.MemoryPages) || d.ActivationTimeoutMs != a.WallTime.Milliseconds() ||
		d.MaxOutputBytes != a.MaxOutputBytes || d.MaxStepOutputBytes != a.MaxStepOutputBytes {
		t.Fatalf("the engine's tenant defaults %+v are not the host's activation defaults %+v", d, a)
	}
	for i, v := 0, reflect.ValueOf(d); i < v.NumField(); i++ {
		if name := v.Type().Field(i).Name; name != "AllowedHosts" && v.Field(i).IsZero() {
			t.Errorf("DefaultTenantLimits has no %s", name)
		}
	}

	eng, err := engine.New(engine.Config{Store: st, Runtime: rt, TenantDefaults: store.Limits{MaxEventBytes: 77}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := eng.CreateTenant(context.Background(), "plain", store.Limits{}); err != nil {
		t.Fatal(err)
	}
	want := d
	want.MaxEventBytes = 77
	if got, err := eng.Limits(context.Background(), "plain"); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("effective limits %+v (%v), want the defaults with maxEventBytes 77: %+v", got, err, want)
	}

	for _, c := range []struct {
		limits store.Limits
		naming string
	}{
		{store.Limits{MemoryPages: -1}, "memoryPages"},
		{store.Limits{MemoryPages: 65537}, "memoryPages"},
		{store.Limits{ActivationTimeoutMs: -5}, "activationTimeoutMs"},
		{store.Limits{Concurrency: -1}, "concurrency"},
		{store.Limits{MaxInputBytes: 64<<20 + 1}, "maxInputBytes"},
		{store.Limits{MaxBufferedEvents: -3}, "maxBufferedEvents"},
		{store.Limits{AllowedHosts: []string{"exa mple.com"}}, "allowedHosts[0]"},
	} {
		_, err := engine.New(engine.Config{Store: st, Runtime: rt, TenantDefaults: c.limits})
		if err == nil || !strings.Contains(err.Error(), "TenantDefaults") || !strings.Contains(err.Error(), c.naming) {
			t.Errorf("TenantDefaults %+v: %v, want an error naming %s", c.limits, err, c.naming)
		}
	}
}

// TestNegativeDurationsAreRefused: a negative poll interval made the claimer poll without
// pause, a negative sweep interval panicked the sweeper's ticker once the daemon was up, and
// a negative shutdown grace stopped waiting for anything; New refuses each, naming it.
func TestNegativeDurationsAreRefused(t *testing.T) {
	t.Parallel()
	st, err := embedded.Open(context.Background(), embedded.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for name, cfg := range map[string]engine.Config{
		"PollInterval":  {PollInterval: -time.Second},
		"SweepInterval": {SweepInterval: -time.Second},
		"SchedulePoll":  {SchedulePoll: -time.Second},
		"ShutdownGrace": {ShutdownGrace: -time.Second},
		// Not a duration, but refused alike: a negative window read every journal whole.
		"JournalWindow": {JournalWindow: -1},
		// -1 is "none"; below it, or more than the slots themselves, is a mistake.
		"ReservedSlots": {ReservedSlots: -2},
		"TenantStarts":  {TenantStarts: -1},
	} {
		cfg.Store, cfg.Runtime = st, testenv.Runtime(t)
		if _, err := engine.New(cfg); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s negative: %v, want an error naming it", name, err)
		}
	}
}
