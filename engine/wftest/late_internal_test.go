package wftest

import (
	"testing"
	"time"

	"github.com/wfhost/wfhost/store"
)

// TestLateEventsArriveAfterTheirTime: the late variant moves the virtual clock past an event's
// time before sending it, half way to what comes due next and at most an hour on, and never
// under a run that is due or held by a lease.
func TestLateEventsArriveAfterTheirTime(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	vnow := start.Add(2 * time.Hour)
	at := func(d time.Duration) *time.Time { x := vnow.Add(d); return &x }
	waiting := []store.Step{{Key: "await-verify", Status: store.StepWaiting}}
	ran := []store.Step{{Key: "create-user", Status: store.StepCompleted}}
	oneEvent := &Scenario{Events: []Event{{At: Duration(2 * time.Hour), Name: "verify"}}}
	twoEvents := &Scenario{Events: []Event{{At: Duration(2 * time.Hour), Name: "verify"}, {At: Duration(2*time.Hour + 20*time.Minute), Name: "verify"}}}
	for _, c := range []struct {
		name  string
		sc    *Scenario
		run   store.Run
		steps []store.Step
		want  time.Duration // after vnow
	}{
		{"waiting with no timer: an hour late", oneEvent, store.Run{}, waiting, time.Hour},
		{"waiting, timing out in 10 h: an hour late", oneEvent, store.Run{AvailableAt: at(10 * time.Hour)}, waiting, time.Hour},
		{"waiting, timing out in 1 h: half way", oneEvent, store.Run{AvailableAt: at(time.Hour)}, waiting, 30 * time.Minute},
		{"the next event in 20 min: half way to it", twoEvents, store.Run{}, waiting, 10 * time.Minute},
		{"held by a lease: on time", oneEvent, store.Run{AvailableAt: at(time.Minute)}, ran, 0},
		{"due now: on time", oneEvent, store.Run{AvailableAt: at(0)}, waiting, 0},
	} {
		v := &variant{sc: c.sc}
		if got := v.lateTime(c.run, c.steps, vnow, start, 0).Sub(vnow); got != c.want {
			t.Errorf("%s: sent %v after its time, want %v", c.name, got, c.want)
		}
	}
}
