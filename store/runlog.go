package store

import (
	"encoding/json"
	"time"
)

// LogKind names one kind of lifecycle log entry.
type LogKind string

// Lifecycle log kinds (ListRunLog). A run's log holds each change the store made to it, in
// order; store/RATIONALE.md says which write makes each and why some changes have none.
const (
	// LogCreated: the run was created. With Detail.claimed it was created already leased to
	// Host (a host started it and runs it at once): created and claimed in one entry.
	LogCreated LogKind = "created"
	// LogClaimed: Host leased the run for an activation (Detail.activation counts them); with
	// Detail.expiredLeaseOf, the previous holder's lease had run out, a fault of its activation.
	// An activation starts here and ends at the next suspended, released, faulted, ended or
	// nondeterministic entry (or a later claimed, when its lease ran out).
	LogClaimed LogKind = "claimed"
	// LogSuspended: the activation handed the run back at an unfinished journal entry
	// (Detail.why: sleep, wait, retry, or that entry's kind; Detail.step), until Detail.until
	// (absent: until an event).
	LogSuspended LogKind = "suspended"
	// LogReleased: the activation handed the run back to go on at once, at no fault of the
	// run's (a host shutting down, a lease handed back after a lost answer).
	LogReleased LogKind = "released"
	// LogFaulted: the activation ended in a fault that is not the workflow's (Detail.reason),
	// the run to be tried again at Detail.until.
	LogFaulted LogKind = "faulted"
	// LogWoken: someone else's write made a suspended run runnable ahead of its time (a signal
	// or broadcast delivered to its wait). A run that wakes at its time gets no entry: its
	// next claimed entry is the wake-up.
	LogWoken LogKind = "woken"
	// LogCancelRequested: a cancel was asked of the live run (Detail.graceUntil).
	LogCancelRequested LogKind = "cancel_requested"
	// LogNondeterministic: a replay diverged from the journal (Detail.message); the run waits
	// for a fixed module or a cancel.
	LogNondeterministic LogKind = "nondeterministic"
	// LogUpgraded: the run moved to another module version (Detail.version, Detail.digest):
	// a hotfix deploy of a nondeterministic run, or the upgrade gate.
	LogUpgraded LogKind = "upgraded"
	// LogPaused and LogResumed: the run's status went to and from paused.
	LogPaused  LogKind = "paused"
	LogResumed LogKind = "resumed"
	// LogEnded: the run reached a terminal status (Detail.status; Detail.code for an error),
	// cancelled runs included; Host is the host that held it then, if any.
	LogEnded LogKind = "ended"
	// LogStepRetrying: an attempt of a run step failed (Detail.step, attempt, code, message)
	// and will be tried again at Detail.until.
	LogStepRetrying LogKind = "step_retrying"
	// LogStepFailed: a run step failed for good (attempts spent or a non-retryable error).
	LogStepFailed LogKind = "step_failed"
	// LogEventDelivered: an event (Detail.event, eventId) resolved a wait (Detail.step).
	LogEventDelivered LogKind = "event_delivered"
	// LogWaitTimedOut: a wait (Detail.step) reached its timeout without an event.
	LogWaitTimedOut LogKind = "wait_timed_out"
)

// LogKinds are every LogKind, in the order above.
var LogKinds = []LogKind{LogCreated, LogClaimed, LogSuspended, LogReleased, LogFaulted, LogWoken,
	LogCancelRequested, LogNondeterministic, LogUpgraded, LogPaused, LogResumed, LogEnded,
	LogStepRetrying, LogStepFailed, LogEventDelivered, LogWaitTimedOut}

// LogEntry is one entry of a run's lifecycle log. Entries are never changed; they are deleted
// with their run.
type LogEntry struct {
	RunID string
	// Seq orders a run's entries; it grows over every run of the store, so a run's Seqs have
	// gaps. A reader pages with the last Seq it has seen.
	Seq  int64
	At   time.Time
	Kind LogKind
	// Host is the host that took the lease (created leased, claimed) or that held it when the
	// change was made (suspended, released, faulted, and a status change: ended,
	// nondeterministic, paused, resumed, upgraded); "" when no host did (a pending run created,
	// a cancel of a run no host holds, a journal entry's kinds).
	Host string
	// Detail is the kind's JSON object (see the kinds); nil when it has nothing to say.
	Detail json.RawMessage
}

// MaxLogPage bounds one ListRunLog page, so no caller reads a long log whole by mistake (the
// API's pages are smaller).
const MaxLogPage = 10_000

// LogGuest is the lifecycle log's kind for a line the run's guest logged (the ABI's log, and
// its stdout and stderr lines): kept in the run's log, so it is swept with the run, but never
// listed by ListRunLog, whose entries are what the store did to the run. ListGuestLog reads
// them.
const LogGuest LogKind = "guest"

// Bounds of a run's guest log: AppendGuestLog keeps a line while the run's guest log holds
// fewer than MaxGuestLogLines lines and the line fits in MaxGuestLogBytes of messages, and
// drops it otherwise. The oldest lines are kept: a line once stored is never deleted before
// its run, so an append is an insert and never a delete, and the first lines (what the run
// did first, the first failure) stay when a loop logs without end.
const (
	MaxGuestLogLines = 1000
	MaxGuestLogBytes = 256 << 10
)

// GuestLogLine is one line a run's guest logged.
type GuestLogLine struct {
	// Seq orders a run's lines (the lifecycle log's seq); a reader pages with the last seen.
	Seq int64
	At  time.Time
	// Level is debug, info, warn or error.
	Level string
	// Message is storable and redacted (the host made it so), at most 4 KiB.
	Message string
	// Stream is stdout or stderr for a line the guest wrote there; "" for a log call.
	Stream string
	// Step is the key of the step whose callback logged it; "" outside steps.
	Step string
}
