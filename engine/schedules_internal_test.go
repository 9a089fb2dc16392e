package engine

import (
	"testing"
	"time"
)

// FuzzParseFireTimes: whatever a client sends as a cron expression, a time zone and an
// interval, parsing never panics, and what parses yields fire times strictly after the time
// asked about, in order, each in UTC.
func FuzzParseFireTimes(f *testing.F) {
	for _, seed := range []struct {
		cron, tz string
		ms       int64
	}{
		{"*/5 * * * * *", "", 0}, {"0 30 9 * * MON-FRI", "Europe/Paris", 0}, {"@daily", "America/New_York", 0},
		{"0 0 0 30 2 *", "", 0}, {"61 * * * *", "", 0}, {"", "", 1000}, {"", "", 86_400_000}, {"1-2/0 * * * *", "", 0},
		{"TZ=UTC * * * * *", "", 0}, {"@every 1s", "", 0}, {"* * * * *", "../../etc/passwd", 0}, {"0 0 1 1 *", "Local", 0},
	} {
		f.Add(seed.cron, seed.tz, seed.ms, int64(1772355600))
	}
	f.Fuzz(func(t *testing.T, cronExpr, tz string, intervalMs, fromUnix int64) {
		times, err := parseFireTimes(cronExpr, tz, intervalMs)
		if err != nil {
			return
		}
		at := time.Unix(fromUnix%(1<<34), 0).UTC() // within a few hundred years of the epoch
		for range 3 {
			next := times.after(at)
			if next.IsZero() {
				return
			}
			if !next.After(at) || next.Location() != time.UTC {
				t.Fatalf("%q %q %d: after(%v) = %v", cronExpr, tz, intervalMs, at, next)
			}
			at = next
		}
	})
}
