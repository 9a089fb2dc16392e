package storetest

import (
	"testing"
	"time"

	"github.com/wfhost/wfhost/store"
)

var scheduleTests = []test{
	{"CreateGetListDelete", testScheduleCRUD},
	{"AdvanceIsCompareAndSet", testScheduleAdvance},
	{"PauseAndResume", testSchedulePause},
	{"BufferedFireTimesAreDue", testScheduleBuffered},
}

// schedule is a schedule of the fixture's tenant whose next fire time is next.
func (f *fixture) schedule(id string, next time.Time) store.Schedule {
	return store.Schedule{TenantID: f.tenant, ID: id, Cron: "*/5 * * * * *", TimeZone: "Europe/Paris",
		Workflow: wfName, Input: []byte(`{"n":1}`), Overlap: store.OverlapSkip, CatchupWindowMs: 60000,
		JitterMs: 250, NextFireAt: next, DueAt: next.Add(100 * time.Millisecond)}
}

// dueIDs is the IDs of the fixture tenant's schedules DueSchedules returns at now (the
// Postgres suite shares one database with other tests' tenants).
func (f *fixture) dueIDs(now time.Time) []string {
	f.t.Helper()
	due, err := f.s.DueSchedules(f.ctx, now, 1000)
	ok(f.t, err)
	var ids []string
	for _, sc := range due {
		if sc.TenantID == f.tenant {
			ids = append(ids, sc.ID)
		}
	}
	return ids
}

func testScheduleCRUD(t *testing.T, f *fixture) {
	next := f.now().Truncate(time.Second).Add(time.Hour)
	want := f.schedule("nightly", next)
	got, err := f.s.CreateSchedule(f.ctx, want)
	ok(t, err)
	equal(t, "id", got.ID, "nightly")
	equal(t, "cron", got.Cron, want.Cron)
	equal(t, "time zone", got.TimeZone, "Europe/Paris")
	equal(t, "overlap", got.Overlap, store.OverlapSkip)
	equal(t, "catch-up window", got.CatchupWindowMs, int64(60000))
	equal(t, "jitter", got.JitterMs, int64(250))
	equalJSON(t, "input", got.Input, `{"n":1}`)
	check(t, got.NextFireAt.Equal(next), "next fire time %v, want %v", got.NextFireAt, next)
	check(t, got.DueAt.Equal(want.DueAt), "due at %v, want %v", got.DueAt, want.DueAt)
	check(t, !got.Paused && got.BufferedFireAt == nil && got.LastFireAt == nil && got.LastRunID == "", "a new schedule has state: %+v", got)
	check(t, !got.CreatedAt.IsZero(), "no creation time")

	_, err = f.s.CreateSchedule(f.ctx, want)
	isErr(t, "second create", err, store.ErrConflict)
	other := want
	other.TenantID = "no-such-tenant-" + randomHex(4)
	_, err = f.s.CreateSchedule(f.ctx, other)
	isErr(t, "schedule of a missing tenant", err, store.ErrNotFound)

	interval := f.schedule("every-minute", next)
	interval.Cron, interval.TimeZone, interval.IntervalMs = "", "", 60000
	_, err = f.s.CreateSchedule(f.ctx, interval)
	ok(t, err)

	read, err := f.s.GetSchedule(f.ctx, f.tenant, "nightly")
	ok(t, err)
	deepEqual(t, "read back", read, got)
	list, err := f.s.ListSchedules(f.ctx, f.tenant)
	ok(t, err)
	check(t, len(list) == 2 && list[0].ID == "every-minute" && list[1].ID == "nightly", "list by id: %+v", list)
	equal(t, "interval", list[0].IntervalMs, int64(60000))

	// Another tenant sees none of them, and cannot delete them.
	stranger := "tenant-" + randomHex(4)
	ok(t, f.s.EnsureTenant(f.ctx, stranger))
	_, err = f.s.GetSchedule(f.ctx, stranger, "nightly")
	isErr(t, "another tenant's schedule", err, store.ErrNotFound)
	list, err = f.s.ListSchedules(f.ctx, stranger)
	ok(t, err)
	equal(t, "another tenant's list", len(list), 0)
	isErr(t, "another tenant's delete", f.s.DeleteSchedule(f.ctx, stranger, "nightly"), store.ErrNotFound)
	_, err = f.s.SetSchedulePaused(f.ctx, stranger, "nightly", true, time.Time{}, time.Time{})
	isErr(t, "another tenant's pause", err, store.ErrNotFound)

	ok(t, f.s.DeleteSchedule(f.ctx, f.tenant, "nightly"))
	isErr(t, "second delete", f.s.DeleteSchedule(f.ctx, f.tenant, "nightly"), store.ErrNotFound)
	_, err = f.s.GetSchedule(f.ctx, f.tenant, "nightly")
	isErr(t, "deleted schedule", err, store.ErrNotFound)
}

func testScheduleAdvance(t *testing.T, f *fixture) {
	now := f.now()
	fire := now.Truncate(time.Second).Add(-time.Second)
	_, err := f.s.CreateSchedule(f.ctx, f.schedule("s", fire))
	ok(t, err)
	_, err = f.s.CreateSchedule(f.ctx, f.schedule("later", now.Add(time.Hour)))
	ok(t, err)
	deepEqual(t, "due", f.dueIDs(now.Add(time.Second)), []string{"s"})
	at, found, err := f.s.NextScheduleDue(f.ctx)
	ok(t, err)
	check(t, found && !at.After(fire.Add(100*time.Millisecond)), "next schedule due %v (found %v), want at most %v", at, found, fire)

	run := f.run()
	next := fire.Add(5 * time.Second)
	adv := store.ScheduleAdvance{TenantID: f.tenant, ID: "s", From: fire, NextFireAt: next, DueAt: next,
		Started: &store.ScheduleStart{FireAt: fire, RunID: run.ID}}
	done, err := f.s.AdvanceSchedule(f.ctx, adv)
	ok(t, err)
	check(t, done, "the first advance from the state read did not write")
	// A second host that read the same state finds it advanced and writes nothing.
	adv.LastError = "from the second host"
	done, err = f.s.AdvanceSchedule(f.ctx, adv)
	ok(t, err)
	check(t, !done, "a second advance from the same state wrote")

	got, err := f.s.GetSchedule(f.ctx, f.tenant, "s")
	ok(t, err)
	check(t, got.NextFireAt.Equal(next) && got.DueAt.Equal(next), "advanced to %v / %v, want %v", got.NextFireAt, got.DueAt, next)
	equal(t, "last run", got.LastRunID, run.ID)
	equalTime(t, "last fire", got.LastFireAt, &fire)
	equal(t, "last error", got.LastError, "")

	// An advance that starts nothing keeps the last run and records why.
	done, err = f.s.AdvanceSchedule(f.ctx, store.ScheduleAdvance{TenantID: f.tenant, ID: "s", From: next,
		NextFireAt: next.Add(5 * time.Second), DueAt: next.Add(5 * time.Second), LastError: "workflow not found"})
	ok(t, err)
	check(t, done, "an advance without a start did not write")
	got, err = f.s.GetSchedule(f.ctx, f.tenant, "s")
	ok(t, err)
	equal(t, "last run kept", got.LastRunID, run.ID)
	equalTime(t, "last fire kept", got.LastFireAt, &fire)
	equal(t, "last error", got.LastError, "workflow not found")

	// A gone schedule, or another tenant's, is not advanced.
	done, err = f.s.AdvanceSchedule(f.ctx, store.ScheduleAdvance{TenantID: "tenant-" + randomHex(4), ID: "later", From: now.Add(time.Hour)})
	ok(t, err)
	check(t, !done, "another tenant advanced the schedule")
}

func testSchedulePause(t *testing.T, f *fixture) {
	now := f.now()
	fire := now.Add(-time.Second)
	_, err := f.s.CreateSchedule(f.ctx, f.schedule("p", fire))
	ok(t, err)
	paused, err := f.s.SetSchedulePaused(f.ctx, f.tenant, "p", true, time.Time{}, time.Time{})
	ok(t, err)
	check(t, paused.Paused, "not paused")
	check(t, paused.NextFireAt.Equal(fire), "a pause moved the next fire time to %v", paused.NextFireAt)
	equal(t, "due while paused", len(f.dueIDs(now.Add(time.Hour))), 0)

	next := now.Add(time.Minute).Truncate(time.Millisecond)
	resumed, err := f.s.SetSchedulePaused(f.ctx, f.tenant, "p", false, next, next.Add(time.Millisecond))
	ok(t, err)
	check(t, !resumed.Paused, "still paused")
	check(t, resumed.NextFireAt.Equal(next) && resumed.DueAt.Equal(next.Add(time.Millisecond)), "resumed at %v / %v, want %v", resumed.NextFireAt, resumed.DueAt, next)
	equal(t, "due before the next fire time", len(f.dueIDs(now)), 0)
	deepEqual(t, "due at it", f.dueIDs(next.Add(time.Millisecond)), []string{"p"})
	_, err = f.s.SetSchedulePaused(f.ctx, f.tenant, "missing", true, time.Time{}, time.Time{})
	isErr(t, "pause a missing schedule", err, store.ErrNotFound)
}

func testScheduleBuffered(t *testing.T, f *fixture) {
	now := f.now()
	fire := now.Add(-time.Second).Truncate(time.Millisecond)
	_, err := f.s.CreateSchedule(f.ctx, f.schedule("b", fire))
	ok(t, err)
	next := now.Add(time.Hour).Truncate(time.Millisecond)
	done, err := f.s.AdvanceSchedule(f.ctx, store.ScheduleAdvance{TenantID: f.tenant, ID: "b", From: fire,
		NextFireAt: next, DueAt: next, BufferedFireAt: &fire})
	ok(t, err)
	check(t, done, "buffering advance did not write")
	// Not due until next, but it keeps a fire time: the loop must see it to start it.
	deepEqual(t, "buffered schedule is due", f.dueIDs(now), []string{"b"})
	at, found, err := f.s.NextScheduleDue(f.ctx)
	ok(t, err)
	check(t, found && !at.After(fire), "next schedule due %v (found %v), want the buffered fire time %v", at, found, fire)

	// An advance that read no buffered fire time is stale.
	done, err = f.s.AdvanceSchedule(f.ctx, store.ScheduleAdvance{TenantID: f.tenant, ID: "b", From: next, NextFireAt: next, DueAt: next})
	ok(t, err)
	check(t, !done, "an advance from a stale buffered state wrote")
	run := f.run()
	done, err = f.s.AdvanceSchedule(f.ctx, store.ScheduleAdvance{TenantID: f.tenant, ID: "b", From: next, FromBuffered: &fire,
		NextFireAt: next, DueAt: next, Started: &store.ScheduleStart{FireAt: fire, RunID: run.ID}})
	ok(t, err)
	check(t, done, "starting the buffered fire time did not write")
	equal(t, "due once the buffer is empty", len(f.dueIDs(now)), 0)
	got, err := f.s.GetSchedule(f.ctx, f.tenant, "b")
	ok(t, err)
	check(t, got.BufferedFireAt == nil, "buffer kept: %v", got.BufferedFireAt)
	equal(t, "last run", got.LastRunID, run.ID)
}
