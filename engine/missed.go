package engine

import "time"

// A cancel or pause notice names a run; the host that has the run active hears it
// (cancelRequested, pauseActive). A claim reads the run and then registers its activation, so a
// notice that lands between the two finds nothing active here, while the claim read the run
// before the request: the pass would never hear of it, and a run that then parks on a long
// sleep would hold its cancel until the sleep ends. Each host therefore remembers, for a
// while, the notices that found no activation, and an activation that registers takes the
// notice its claim may have missed (execute).

// missedNotice is one notice that found no activation of its run here.
type missedNotice struct {
	at            time.Time
	cancel, pause bool // which were asked
}

// maxMissedNotices bounds the record: every host hears every run's notices, most of them for
// runs it does not hold. Past it, entries older than the keep time go first, then any.
const maxMissedNotices = 4096

// missedNotices records notices that found no activation. It is guarded by Executor.mu.
type missedNotices struct {
	keep  time.Duration // how long a claim may take from its read to its registration: a lease
	byRun map[string]missedNotice
}

// record remembers a cancel notice (or else a pause notice) for runID at now. Called with Executor.mu held.
func (m *missedNotices) record(runID string, cancel bool, now time.Time) {
	if m.byRun == nil {
		m.byRun = make(map[string]missedNotice)
	}
	if len(m.byRun) >= maxMissedNotices {
		for id, n := range m.byRun {
			if now.Sub(n.at) > m.keep {
				delete(m.byRun, id)
			}
		}
		for id := range m.byRun {
			if len(m.byRun) < maxMissedNotices {
				break
			}
			delete(m.byRun, id)
		}
	}
	n := m.byRun[runID]
	n.at = now
	if cancel {
		n.cancel = true
	} else {
		n.pause = true
	}
	m.byRun[runID] = n
}

// take returns and forgets the notices recorded for runID within the keep time before now.
// Called with Executor.mu held.
func (m *missedNotices) take(runID string, now time.Time) (cancel, pause bool) {
	n, ok := m.byRun[runID]
	if !ok {
		return false, false
	}
	delete(m.byRun, runID)
	if now.Sub(n.at) > m.keep {
		return false, false
	}
	return n.cancel, n.pause
}
