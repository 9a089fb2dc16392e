package store

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/wfhost/wfhost/abi"
)

// Sentinel errors. Implementations wrap them with %w and context; callers test with errors.Is.
var (
	// ErrNotFound: no such object for this tenant. Another tenant's object is not found too.
	ErrNotFound = errors.New("not found")
	// ErrConflict: the request contradicts stored state (a workflow version already bound to
	// another module, cancelling or signalling a finished run).
	ErrConflict = errors.New("conflict")
	// ErrLeaseLost: a fenced write matched no row for this lease epoch. The run was reclaimed by
	// another host, cancelled, or finished; the caller must stop the activation and write nothing.
	ErrLeaseLost = errors.New("lease lost")
	// ErrLimit: a per-run or per-tenant bound would be exceeded (events buffered per run, ...).
	ErrLimit = errors.New("limit exceeded")
	// ErrUnavailable: the store cannot serve the call now: it cannot be reached (connection
	// refused or reset, a pool with no connection to give), it is shutting down or starting,
	// it answers read-only (a standby, or a primary demoted by a failover), or it has no room
	// (a full disk). Nothing was written, or the outcome of a write is unknown; the same call
	// may succeed later. The API answers 503 with Retry-After; the engine tries again.
	ErrUnavailable = errors.New("store unavailable")
	// ErrRefused: the store refused a value it can never keep as it is (a data exception such
	// as a string Postgres cannot hold, an integrity violation, a value past one of its own
	// limits). Trying the same write again fails the same way; the engine fails the run with
	// abi.CodeStoreRefused instead.
	ErrRefused = errors.New("refused by the store")
)

// Classify is every store's error rule: err marked with ErrUnavailable when unavailable says
// the store could not serve now, with ErrRefused when refused says it will never keep the
// value, and left as it is otherwise or when it already carries either sentinel. Each store
// passes its driver's reading of the two.
func Classify(err error, unavailable, refused func(error) bool) error {
	if err == nil || errors.Is(err, ErrUnavailable) || errors.Is(err, ErrRefused) {
		return err
	}
	switch {
	case unavailable(err):
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	case refused(err):
		return fmt.Errorf("%w: %w", ErrRefused, err)
	}
	return err
}

// DefaultTenant is the tenant that `wfhost run --token` and the embedded demo serve.
const DefaultTenant = "default"

// Tenant is one isolated user of a daemon: its modules, runs, events and tokens are invisible
// to every other tenant.
type Tenant struct {
	ID        string
	Limits    Limits // the tenant's overrides; zero fields take the operator's defaults
	CreatedAt time.Time
}

// Limits bound what one tenant may use. A zero field means "the operator's default"; the
// engine merges them (engine.Config.TenantDefaults). The JSON names are the stored and the API
// form.
type Limits struct {
	MemoryPages         int   `json:"memoryPages,omitempty"`         // per instance, 64 KiB each
	ActivationTimeoutMs int64 `json:"activationTimeoutMs,omitempty"` // wall time of one activation
	Concurrency         int   `json:"concurrency,omitempty"`         // activations at once, over all hosts
	MaxModuleBytes      int   `json:"maxModuleBytes,omitempty"`
	MaxInputBytes       int   `json:"maxInputBytes,omitempty"`
	MaxOutputBytes      int   `json:"maxOutputBytes,omitempty"`
	MaxStepOutputBytes  int   `json:"maxStepOutputBytes,omitempty"`
	MaxEventBytes       int   `json:"maxEventBytes,omitempty"`
	MaxStepsPerRun      int   `json:"maxStepsPerRun,omitempty"`
	MaxBufferedEvents   int   `json:"maxBufferedEvents,omitempty"` // events kept for a run before a wait takes them
	// AllowedHosts are the hosts step callbacks may send HTTP requests to: "api.example.com",
	// "*.example.com" for its subdomains, an IP literal, each with an optional scheme and port
	// ("https://api.example.com:8443"; without a port, https on 443 and http on 80). None
	// means no outbound HTTP. host.CheckAllowedHosts is the grammar (ABI.md §4.11).
	AllowedHosts []string `json:"allowedHosts,omitempty"`
}

// Or returns l with every zero field taken from defaults.
func (l Limits) Or(defaults Limits) Limits {
	or := func(a, b int) int {
		if a != 0 {
			return a
		}
		return b
	}
	if l.ActivationTimeoutMs == 0 {
		l.ActivationTimeoutMs = defaults.ActivationTimeoutMs
	}
	l.MemoryPages = or(l.MemoryPages, defaults.MemoryPages)
	l.Concurrency = or(l.Concurrency, defaults.Concurrency)
	l.MaxModuleBytes = or(l.MaxModuleBytes, defaults.MaxModuleBytes)
	l.MaxInputBytes = or(l.MaxInputBytes, defaults.MaxInputBytes)
	l.MaxOutputBytes = or(l.MaxOutputBytes, defaults.MaxOutputBytes)
	l.MaxStepOutputBytes = or(l.MaxStepOutputBytes, defaults.MaxStepOutputBytes)
	l.MaxEventBytes = or(l.MaxEventBytes, defaults.MaxEventBytes)
	l.MaxStepsPerRun = or(l.MaxStepsPerRun, defaults.MaxStepsPerRun)
	l.MaxBufferedEvents = or(l.MaxBufferedEvents, defaults.MaxBufferedEvents)
	if l.AllowedHosts == nil {
		l.AllowedHosts = defaults.AllowedHosts
	}
	return l
}

// Secret is a tenant's named secret, without its value: values go in through PutSecret and come
// out only through GetSecret.
type Secret struct {
	TenantID  string
	Name      string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// SecretValue is a secret's value as the store keeps it: sealed by the engine with envelope
// encryption (the ciphertext under a data key of its own, the data key wrapped by the
// operator's key KeyID), so a store never holds a plaintext value, except in a row written
// before values were encrypted, which the engine seals when it starts with a key.
type SecretValue struct {
	// KeyID names the key that wrapped DataKey; "" marks a row from before encryption, whose
	// value is Plaintext.
	KeyID      string
	DataKey    []byte
	Ciphertext []byte
	Plaintext  []byte
}

// NamedSecretValue is a secret's name with its stored value.
type NamedSecretValue struct {
	Name  string
	Value SecretValue
}

// OutboundRecord is one hop of an outbound HTTP request a run made (or tried to make), inside
// a step or not: the audit trail. A request's hops (as made, then each redirect followed)
// share its RequestID. It never holds bodies, header values or query strings.
type OutboundRecord struct {
	ID         int64
	TenantID   string
	RunID      string
	Step       string // "" for a request made outside a step callback
	RequestID  string
	Hop        int // 0 for the request as the guest made it, n for its nth redirect
	Method     string
	Scheme     string
	Host       string
	Port       int
	Path       string
	Status     int    // 0 when no response came
	Error      string // the refusal or failure code, "" on a response
	BytesOut   int
	BytesIn    int
	DurationMs float64
	At         time.Time
}

// Token is an API credential of one tenant. Only Hash, the SHA-256 of the secret, is stored.
type Token struct {
	ID        string
	TenantID  string
	Name      string
	Hash      []byte
	CreatedAt time.Time
	RevokedAt *time.Time
}

// RunStatus is a run's lifecycle state.
type RunStatus string

// Run statuses. Pending and running runs are live; the others are terminal except
// nondeterministic, which waits for a hotfix deploy (or a cancel), and paused, which waits for
// a resume (or a cancel). A continued run ended by
// handing on to a fresh run of its workflow (Run.ContinuedAs): continue-as-new.
const (
	StatusPending          RunStatus = "pending"   // created, never activated
	StatusRunning          RunStatus = "running"   // activated at least once, possibly suspended
	StatusCompleted        RunStatus = "completed" // terminal
	StatusFailed           RunStatus = "failed"    // terminal
	StatusCancelled        RunStatus = "cancelled" // terminal
	StatusContinued        RunStatus = "continued" // terminal
	StatusNondeterministic RunStatus = "nondeterministic"
	// StatusPaused: held by an operator's pause, its workflow's or version's, or a step whose
	// attempts ran out under abi.ExhaustedPause; no host claims it until it is resumed
	// (Store.UnpauseRun). Its journal, wake time and buffered events stay as they were.
	StatusPaused RunStatus = "paused"
)

// Terminal reports whether a run in status s can never change again.
func (s RunStatus) Terminal() bool {
	return s == StatusCompleted || s == StatusFailed || s == StatusCancelled || s == StatusContinued
}

// RunState is what a live run is doing now, as an operator counts runs: a finer split of the
// live statuses (pending, running, nondeterministic) by lease, wait and due time.
type RunState string

// Run states. A run is in exactly one: paused (status paused, waiting for a resume, or
// nondeterministic, waiting for a hotfix deploy; either may be cancelled), else running (leased by a live host: an activation, or a pass parked in memory),
// else waiting (on an event, with or without a timeout), else sleeping (not due yet: a sleep
// or a retry backoff), else queued (due, waiting for a slot).
const (
	StateQueued   RunState = "queued"
	StateRunning  RunState = "running"
	StateWaiting  RunState = "waiting"
	StateSleeping RunState = "sleeping"
	StatePaused   RunState = "paused"
)

// RunStates are every RunState, in the order above.
var RunStates = []RunState{StateQueued, StateRunning, StateWaiting, StateSleeping, StatePaused}

// RunStateCount is how many live runs of a tenant are in a state.
type RunStateCount struct {
	TenantID string
	State    RunState
	Runs     int
}

// Module is an uploaded wasm module, stored once per tenant and digest.
type Module struct {
	TenantID   string
	Digest     string // lowercase hex sha256 of Bytes
	Size       int
	ABIVersion int
	CreatedAt  time.Time
	Bytes      []byte // only filled by GetModule
}

// Workflow is one (tenant, name, version) bound to the module that declares it.
type Workflow struct {
	TenantID      string
	Name          string
	Version       string
	Digest        string
	RetentionDays int // 0: operator default
	Retry         abi.RetryPolicy
	Triggers      []string
	// Flow is the workflow's flow control (nil: none). PutModule stores it; the reads of
	// workflows (ResolveWorkflow, ListWorkflowVersions) leave it nil: only a start reads it.
	Flow *abi.Flow
	// OnEnd are the version's completion hooks from its module's description, kept as
	// module hooks (Hook, HookSourceTenant's sibling HookSourceModule) with ids
	// ModuleHookID(Name, Version, i) and replaced whenever the version is bound; not read back.
	OnEnd     []abi.Hook
	CreatedAt time.Time
}

// WorkflowSummary is one workflow name with its versions and run counts.
type WorkflowSummary struct {
	Name          string
	LatestVersion string
	Versions      []string
	RunCounts     map[RunStatus]int
}

// WorkflowPause is a paused workflow (Version "") or version of one (Store.PauseWorkflow).
type WorkflowPause struct {
	TenantID string
	Workflow string
	Version  string
	PausedAt time.Time
}

// NewRun is what CreateRun needs; the store assigns ID and timestamps.
type NewRun struct {
	TenantID       string
	Workflow       string
	Version        string
	Digest         string
	Input          json.RawMessage
	IdempotencyKey string // "" means none
	RetentionDays  int
	// Deadline, when set, is when the run times out (Run.Deadline).
	Deadline *time.Time
	// Retry is the run's own retry policy (Run.Retry); nil: a failed run is not retried.
	Retry *abi.RetryPolicy
	// Attempt is the run's attempt (Run.Attempt); 0 is 1.
	Attempt int
	// ContinuedFrom is the run this one continues (Run.ContinuedFrom); FinishAndContinue sets it.
	ContinuedFrom string
	// NotBefore, when set, is the earliest the new run may be claimed (a retry's backoff);
	// FinishAndContinue reads it.
	NotBefore *time.Time
	// Priority, when set, is the run's priority in seconds of head start (abi.MinPriority
	// to abi.MaxPriority): it is claimed as if created Priority seconds earlier. Nil: the
	// workflow's default (abi.Flow.Priority), else 0. CreateLeasedRun reads it.
	Priority *int
	// Trigger, when set, is what started the run, for the starts nothing else in the store
	// records (a schedule's, an event trigger's, a signal-with-start): kept with the run and
	// read back by RunTrigger.
	Trigger *Trigger
	// DefaultRetentionDays and MaxRetentionDays are for CreateLeasedRun, which resolves the
	// workflow itself: the run keeps RetentionDays, else the workflow's, else
	// DefaultRetentionDays, never more than MaxRetentionDays (0: no ceiling).
	DefaultRetentionDays, MaxRetentionDays int
}

// Run is one execution of a workflow version.
type Run struct {
	ID             string // UUID
	TenantID       string
	Workflow       string
	Version        string
	Digest         string
	Status         RunStatus
	Input          json.RawMessage
	Output         json.RawMessage // completed runs only
	Error          *abi.ErrorInfo  // failed, cancelled and nondeterministic runs
	IdempotencyKey string
	RetentionDays  int
	Activations    int        // how many times the run has been claimed
	AvailableAt    *time.Time // when it may next be claimed; nil: only an event wakes it
	CreatedAt      time.Time
	StartedAt      *time.Time // first claim
	CompletedAt    *time.Time // terminal
	UpdatedAt      time.Time
	// Deadline is when the run times out whatever it is doing (a workflow deadline: the
	// engine fails it with abi.CodeRunTimeout); nil: never.
	Deadline *time.Time
	// Retry, when set, is the run's own retry policy: when the run fails, the engine starts
	// a fresh run of the workflow with the same input as its next Attempt, after the policy's
	// backoff, until its attempts are spent (a workflow-level retry, as Temporal's).
	Retry *abi.RetryPolicy
	// Attempt counts the runs of a retry chain: 1 for a started run, n+1 for a retry of
	// attempt n, 1 again after a continue-as-new.
	Attempt int
	// ContinuedFrom is the run this one continues (by continue-as-new or as a retry); "" for
	// a run started by a client, a broadcast or a schedule.
	ContinuedFrom string
	// ContinuedAs is the run that continues this one; "" until it has ended so.
	ContinuedAs string
	// CancelRequestedAt is when a cancel (RequestCancel) was asked of the live run; nil: none.
	// The workflow sees it at its next durable call and may compensate until CancelGraceUntil,
	// when it is terminated.
	CancelRequestedAt *time.Time
	CancelGraceUntil  *time.Time
	// RestartedFrom is the ended run this one restarts (RestartRun), or the run, ended or
	// live, this one forks (ForkRun): from scratch, or from one of its steps with the journal
	// before it copied; "" for any other run.
	RestartedFrom string
	// PausedAt is when a pause was asked of the run (Store.PauseRun, a workflow's pause, or its
	// creation under one); nil: none. A run with it set is paused, or still running and pausing
	// at its next durable call (the host holding it writes the pause, HoldPaused).
	PausedAt *time.Time
}

// ClaimReadsJournal reports whether a claim of the run (as the claim returns it, this
// activation counted) reads its journal: a run past its first activation has one, and so does
// a restarted or forked run from its first (RestartedFrom), which starts with the entries it
// kept. A fresh run's first claim reads nothing: it cannot have a journal yet. (A branch is
// created with one activation counted, for the same reason.)
func (r Run) ClaimReadsJournal() bool { return r.Activations > 1 || r.RestartedFrom != "" }

// StepKind is the verb that made a journal entry.
type StepKind string

// Step kinds.
const (
	KindRun   StepKind = "run"
	KindSleep StepKind = "sleep"
	KindWait  StepKind = "wait"
	// KindChild: a child workflow run the step started (StartChild). Awaited, it is waiting
	// until the child's chain ends, then completed with the child's output or failed with
	// abi.CodeChildFailed; detached, completed at once with an abi.ChildStarted output.
	KindChild StepKind = "child"
	// KindParallel: parallel_run's step, which forked branch runs (ForkBranches): waiting
	// until its join is decided, then completed with an abi.ParallelResult or failed with
	// abi.CodeBranchFailed.
	KindParallel StepKind = "parallel"
	// KindBranch: in a branch run's journal, the entry of the step that forked it (the
	// parent's KindParallel step's key and seq), completed with an abi.Branch output: where a
	// branch's pass is answered abi.StatusBranch.
	KindBranch StepKind = "branch"
)

// ChildLink ties a child run to the parent step that started it (StartChild).
type ChildLink struct {
	ParentRunID string
	ParentKey   string
	// ParentClose is abi.ParentCloseCancel or abi.ParentCloseAbandon: whether the parent's
	// cancellation or termination reaches the child.
	ParentClose string
	// Awaited: the parent's step waits for the child's end.
	Awaited bool
}

// OrphanedChild is a child its parent's end left running (OrphanedChildren).
type OrphanedChild struct {
	TenantID    string
	RunID       string
	ParentRunID string
}

// ChildRef is one child of a run (ChildrenOf): its id, status and link.
type ChildRef struct {
	RunID    string
	Workflow string
	Status   RunStatus
	Link     ChildLink
}

// StepStatus is where a journal entry stands.
type StepStatus string

// Step statuses. Completed and failed are final; the others are updated in place.
const (
	StepCompleted StepStatus = "completed" // run: Output; sleep: elapsed; wait: Output = the event payload
	StepTimedOut  StepStatus = "timed_out" // wait: no matching event before WakeAt; Output = abi.WaitTimeout
	StepFailed    StepStatus = "failed"    // run: Error is final (attempts spent or non-retryable)
	StepRetrying  StepStatus = "retrying"  // run: Attempt attempts failed, Error is the last; next try at WakeAt
	StepSleeping  StepStatus = "sleeping"  // sleep: until WakeAt
	StepWaiting   StepStatus = "waiting"   // wait: for Event matching Match, until WakeAt (nil: forever)
	// StepCancelled: the run's cancellation reached the workflow at this step (a run step not
	// run, a sleep or a wait ended early), Error saying so (abi.CodeCancelled); a replay
	// reaching it answers the same.
	StepCancelled StepStatus = "cancelled"
)

// Step is one journal entry of a run, keyed by (RunID, Key) and ordered by Seq.
type Step struct {
	RunID   string
	Seq     int // 0-based position in the pass order
	Key     string
	Kind    StepKind
	Status  StepStatus
	Output  json.RawMessage
	Error   *abi.ErrorInfo
	Attempt int        // run steps: attempts made so far
	WakeAt  *time.Time // sleeping: until; retrying: next attempt; waiting: timeout
	Event   string     // wait steps: event name
	// Match is a wait step's filter (events whose payload contains it resolve the wait), and a
	// parallel step's request as forked ({"branches", "join", "maxConcurrent"}), which a
	// replay compares with the call it reaches (ABI.md §4.18).
	Match       json.RawMessage
	EventID     *int64 // wait steps: the event that resolved it
	StartedAt   time.Time
	CompletedAt *time.Time
}

// Lease is a host's exclusive claim on a run; Epoch is the fencing token that every write of
// the activation carries.
type Lease struct {
	RunID string
	Epoch int64
}

// RetentionDays is a new run's retention: the requested days, else the workflow's, else the
// default, never more than maxDays (0: no ceiling).
func RetentionDays(requested, workflow, defaultDays, maxDays int) int {
	days := cmp.Or(requested, workflow, defaultDays)
	if maxDays > 0 {
		days = min(days, maxDays)
	}
	return days
}

// LeaseTo is the lease CreateLeasedRun asks for.
type LeaseTo struct {
	Owner    string
	LeaseFor time.Duration
	// TenantCap is the tenant's concurrency cap (0: none). Reserve is the most runs the owner
	// may lease at once: the run is leased only while the tenant's held runs plus Reserve are
	// within the cap, so the owner's starts cannot pass it however many of them race.
	TenantCap, Reserve int
}

// ClaimParams bounds one claim.
type ClaimParams struct {
	Owner    string // the claiming host, for operators
	Limit    int
	LeaseFor time.Duration
	// TenantConcurrency caps the runs one tenant has leased at once, over all hosts, where the
	// tenant's own Limits.Concurrency is zero; 0 means no cap.
	TenantConcurrency int
	// JournalWindow is the most journal entries a claim returns per run, from its JournalFrom
	// on; 0 returns them all. A run with more has Claim.JournalMore set, and its activation reads
	// the rest with JournalPage as its replay reaches them.
	JournalWindow int
}

// ResumeParams asks for one run a host parked (ResumeRun).
type ResumeParams struct {
	RunID    string
	Owner    string
	LeaseFor time.Duration
	// TenantConcurrency is ClaimParams.TenantConcurrency: a resume takes a slot of the
	// tenant's cap like any claim.
	TenantConcurrency int
	// FromSeq is the first journal entry to return: the one the parked pass suspended at.
	FromSeq int
	// JournalWindow is the most journal entries a resume returns, from FromSeq on; 0 returns
	// them all. A run with more has Claim.JournalMore set, and its activation reads the rest
	// with JournalPage as its replay reaches them.
	JournalWindow int
}

// Claim is a run this host now holds, with its journal ordered by Seq: the whole journal, or
// its tail from JournalFrom on (a claim with a snapshot, a resume), or at most a window of
// either (ClaimParams.JournalWindow), JournalMore saying whether entries follow it.
type Claim struct {
	Run     Run
	Lease   Lease
	Journal []Step
	// Faults counts the run's activations in a row that ended in a fault without journal
	// progress (see Store.Fault), this claim's predecessor included when its lease ran out
	// instead of being handed back; LastFault is the most recent one's reason. Any journal
	// write of the run resets them. The engine fails a run whose count reaches its bound.
	Faults    int
	LastFault string
	// Snapshot is the run's latest snapshot when it has one; Journal then holds the entries
	// from JournalFrom (= Snapshot.Seq) on, not from 0. Without one JournalFrom is 0.
	Snapshot    *Snapshot
	JournalFrom int
	// JournalMore is set when the journal goes on past the entries in Journal (JournalWindow).
	JournalMore bool
}

// Snapshot is a run's latest durable snapshot of its guest (engine/snapshots.go): the guest's
// whole state at a durable boundary, from which a later activation goes on instead of replaying
// the journal from the top. The store keeps one per run, replaced by each new one; Data is opaque
// to it (sealed by the engine).
type Snapshot struct {
	RunID string
	// Seq is how many journal entries the snapshot covers: it was taken at the entry of the guest
	// call that reaches entry Seq, entries 0..Seq-1 committed.
	Seq int
	// LastKey is the key of entry Seq-1 ("" when Seq is 0), checked against the journal before
	// a restore.
	LastKey string
	// Code names the exact module code and initial memory the snapshot is of.
	Code      string
	Data      []byte
	CreatedAt time.Time
}

// MaxSnapshotBytes bounds a snapshot's Data: a larger one is ErrRefused by SaveSnapshot.
const MaxSnapshotBytes = 64 << 20

// Event is a named payload sent to one run (RunID set) or broadcast to a tenant.
type Event struct {
	ID         int64
	TenantID   string
	RunID      string // "" for a broadcast
	Name       string
	Payload    json.RawMessage
	ReceivedAt time.Time
}

// RunFilter selects runs for ListRuns.
type RunFilter struct {
	Workflow string // "" for every workflow
	Status   RunStatus
	Since    time.Time       // created at or after; zero for no bound
	Until    time.Time       // created before; zero for no bound
	Input    json.RawMessage // a JSON object the run's input must contain (JSON superset match)
	// Version and IdempotencyKey, when set, select the runs of that workflow version and the
	// run started with that key (one per workflow; one per workflow that used the key when
	// Workflow is "").
	Version        string
	IdempotencyKey string
	// Parent, when set, selects the children of that run (StartChild), its children's
	// successors included.
	Parent string
	Limit  int
	Cursor string // opaque, from the previous page
}

// SignalParams is one event sent to one run.
type SignalParams struct {
	TenantID, RunID, Event string
	Payload                json.RawMessage
	// SignalID, when set, makes the signal idempotent per run: sending it again changes
	// nothing and reports Duplicate. Ids live as long as their run.
	SignalID string
	// MaxBuffered bounds the events the run keeps that no wait has consumed yet.
	MaxBuffered int
}

// SignalResult is what a signal did.
type SignalResult struct {
	Delivered bool // a waiting step took the event; otherwise it is kept for the run
	Duplicate bool // SignalID was taken already; nothing changed, Delivered is the first sending's
}

// SignalWithStartResult is what a signal-with-start did: the run the key names (created or
// found) and what became of the event.
type SignalWithStartResult struct {
	Run     Run
	Created bool
	Signal  SignalResult
}

// BroadcastParams is one event sent to a tenant.
type BroadcastParams struct {
	TenantID string
	Event    string
	Payload  json.RawMessage
	// EventID, when set, makes the event idempotent per tenant and name: sending it again
	// changes nothing and reports Duplicate.
	EventID string
	// Start are the runs the event triggers (one per workflow declaring it), created in the
	// same transaction. With an EventID their idempotency keys should derive from it, so a
	// duplicate finds them.
	Start []NewRun
}

// BroadcastResult is what a broadcast did.
type BroadcastResult struct {
	Resolved int // waiting runs it resolved
	// ResolvedRuns are the ids of the runs it resolved (their spans are linked to the
	// broadcast's).
	ResolvedRuns []string
	Started      []Run // runs it started (with Duplicate: the runs the first sending started)
	Duplicate    bool  // EventID was already taken; nothing changed
}

// Notice is a wake-up sent through Postgres LISTEN/NOTIFY (or the embedded equivalent).
type Notice struct {
	Kind  NoticeKind
	RunID string // cancel notices
	// Self marks a wake notice caused by a write through this same Store value. Its caller
	// (the engine) wakes itself after its own writes, so it may skip these; other hosts'
	// notices are never Self.
	Self bool
}

// NoticeKind distinguishes notices.
type NoticeKind int

// Notice kinds.
const (
	NoticeWake            NoticeKind = iota // new runnable work
	NoticeCancel                            // RunID was cancelled; stop its activation
	NoticeCancelRequested                   // RunID was asked to cancel itself; tell its activation
	NoticePauseRequested                    // RunID was asked to pause; tell its activation
)

// Store is wfhost's persistence. Every method is safe for concurrent use. Every query is
// scoped by tenant (or by a lease, which belongs to one run of one tenant).
//
// Fenced methods take the Lease of the activation and return ErrLeaseLost, writing nothing,
// when the run's lease epoch differs or the run is no longer running.
//
// Errors: a call that could not reach the store returns an error wrapping ErrUnavailable; a
// write of a value the store cannot hold returns one wrapping ErrRefused. Both stores classify
// their own errors this way, so callers never look at a driver's codes.
type Store interface {
	HookStore

	// EnsureTenant creates the tenant if it does not exist.
	EnsureTenant(ctx context.Context, tenantID string) error
	// CreateTenant creates the tenant with its first token, in one transaction; an existing
	// tenant is ErrConflict.
	CreateTenant(ctx context.Context, t Tenant, first Token) (Tenant, error)
	// GetTenant returns one tenant.
	GetTenant(ctx context.Context, tenantID string) (Tenant, error)
	// ListTenants returns every tenant, oldest first.
	ListTenants(ctx context.Context) ([]Tenant, error)
	// CountRunStates counts the live runs of every tenant by RunState (the wfhost_runs gauge).
	// It reads every live run: callers bound how often (engine/runstates.go).
	CountRunStates(ctx context.Context) ([]RunStateCount, error)
	// SetTenantLimits replaces the tenant's limit overrides.
	SetTenantLimits(ctx context.Context, tenantID string, l Limits) (Tenant, error)
	// CreateToken adds a token to an existing tenant (ErrNotFound otherwise); a hash already
	// stored is ErrConflict.
	CreateToken(ctx context.Context, t Token) (Token, error)
	// ListTokens returns the tenant's tokens, revoked ones included, without hashes.
	ListTokens(ctx context.Context, tenantID string) ([]Token, error)
	// RevokeToken revokes one of the tenant's tokens; revoking it again changes nothing.
	// Another tenant's token is ErrNotFound.
	RevokeToken(ctx context.Context, tenantID, tokenID string) (Token, error)
	// Authenticate returns the live (unrevoked) token that has this hash (its ID, TenantID
	// and Name), or ErrNotFound.
	Authenticate(ctx context.Context, hash []byte) (Token, error)

	// PutModule stores the module (idempotent by digest) and binds each workflow
	// (tenant, name, version) to it. A version already bound to another digest is ErrConflict
	// unless replace is set; then the version is rebound and its live runs (pending, running,
	// nondeterministic) move to the new digest and become runnable now, nondeterministic ones as
	// running again, their snapshots deleted (a snapshot is of the old code). Returns the
	// workflows as stored.
	PutModule(ctx context.Context, m Module, workflows []Workflow, replace bool) ([]Workflow, error)
	// UpgradeModule is PutModule for a deploy through the upgrade gate (engine/upgrade.go): it
	// stores the module and binds the workflows as PutModule does (replace rebinds a version)
	// but moves no run on its own; it moves each run of moves to (move.Version, m.Digest) when
	// the run is still what the gate checked: open, on move.From, with move.Entries journal
	// entries, and leased to no one (a held run may be adding entries the gate did not see).
	// A moved run keeps its status and wake time, its snapshot deleted (it is of the old code);
	// a nondeterministic one runs again, available now. A run not moved keeps its version and
	// digest: it stays pinned to the module it was checked on. In one transaction; returns the
	// workflows as stored and the ids of the runs moved.
	UpgradeModule(ctx context.Context, m Module, workflows []Workflow, replace bool, moves []RunMove) ([]Workflow, []string, error)
	// ListOpenRuns returns a page of the open runs q names, by id, each with its whole
	// journal; fewer than q.Limit at the end.
	ListOpenRuns(ctx context.Context, q OpenRunsQuery) ([]OpenRun, error)
	// PutUpgradeReport keeps an upgrade gate's report (ErrConflict for an id already kept).
	PutUpgradeReport(ctx context.Context, r UpgradeReport) error
	// GetUpgradeReport returns one kept report; another tenant's is ErrNotFound.
	GetUpgradeReport(ctx context.Context, tenantID, id string) (UpgradeReport, error)
	// GetModule returns the module with its bytes.
	GetModule(ctx context.Context, tenantID, digest string) (Module, error)
	// ListModules returns the tenant's modules without bytes, newest first.
	ListModules(ctx context.Context, tenantID string) ([]Module, error)
	// RunFlow is where the tenant's run stands under its workflow's flow control; false when
	// it was started under none (ErrNotFound: no such run).
	RunFlow(ctx context.Context, tenantID, runID string) (RunFlow, bool, error)
	// ResolveWorkflow finds a workflow version; version "" means the most recently bound one.
	ResolveWorkflow(ctx context.Context, tenantID, name, version string) (Workflow, error)
	// ListWorkflows returns the tenant's workflow names with run counts by status.
	ListWorkflows(ctx context.Context, tenantID string) ([]WorkflowSummary, error)

	// CreateRun inserts a pending run, available now, and wakes the hosts; a run of a paused
	// workflow or version (PauseWorkflow) is inserted paused instead, as every run is, however
	// it is created. With an
	// IdempotencyKey already used for this tenant and workflow it returns the existing run and
	// created=false, changing nothing.
	CreateRun(ctx context.Context, r NewRun) (run Run, created bool, err error)
	// CreateLeasedRun is CreateRun for the host that will execute the new run itself: the run
	// is created running and leased to to.Owner, as if claimed the moment it was created (lease
	// epoch 1, one activation, an empty journal), and no host is woken. With no to.Owner (the
	// host has no free slot), or when the tenant has a cap and its held runs plus to.Reserve
	// would pass it, the run is created pending and the hosts are woken, as by CreateRun, and
	// the Claim's Lease is zero. With an IdempotencyKey
	// already used it returns the existing run, unchanged, a zero Lease and created=false.
	// It resolves the workflow in the same statement, as ResolveWorkflow does (r.Version ""
	// is the most recently bound one; r.Digest is not read), with the retention rule of
	// NewRun.DefaultRetentionDays; an unknown workflow is ErrNotFound.
	//
	// A workflow with flow control (Workflow.Flow) is never leased: its run is created
	// pending under its keys (see flow.go), delayed by its rate or debounce, held with no
	// available_at while its concurrency key is at its limit, or, debounced, it replaces the
	// input of its key's pending run and returns that run with created=false. An input
	// without a key wraps abi.ErrFlowKey. r.Priority moves a pending run's available_at
	// earlier by that many seconds (later when negative).
	CreateLeasedRun(ctx context.Context, r NewRun, to LeaseTo) (claim Claim, created bool, err error)
	// GetRun returns one run.
	GetRun(ctx context.Context, tenantID, runID string) (Run, error)
	// RunTrigger returns what started one run of the tenant (TriggerOf says how it is read).
	// An unknown run (or another tenant's) is ErrNotFound.
	RunTrigger(ctx context.Context, tenantID, runID string) (Trigger, error)
	// ListRuns returns runs newest first and the cursor of the next page ("" at the end).
	ListRuns(ctx context.Context, tenantID string, f RunFilter) ([]Run, string, error)
	// ListSteps returns the run's journal ordered by Seq.
	ListSteps(ctx context.Context, tenantID, runID string) ([]Step, error)
	// ListStepsFrom returns at most limit entries of the run's journal, those with Seq >= from,
	// ordered by Seq: a page of ListSteps, for a reader of a long journal. An unknown run is
	// ErrNotFound, as for ListSteps.
	ListStepsFrom(ctx context.Context, tenantID, runID string, from, limit int) ([]Step, error)
	// ListRunLog returns at most limit (1 to MaxLogPage) entries of the run's lifecycle log
	// with Seq > after, ordered by Seq. An unknown run (or another tenant's) is ErrNotFound.
	ListRunLog(ctx context.Context, tenantID, runID string, after int64, limit int) ([]LogEntry, error)
	// AppendGuestLog keeps lines the run's guest logged, in order, in one statement, as far as
	// the run's bounds (MaxGuestLogLines, MaxGuestLogBytes) leave room, and returns how many it
	// kept. It is not fenced by a lease: what a guest logged happened, even in an activation
	// that lost its lease. An unknown run (or another tenant's) is ErrNotFound.
	AppendGuestLog(ctx context.Context, tenantID, runID string, lines []GuestLogLine) (kept int, err error)
	// ListGuestLog returns at most limit (1 to MaxLogPage) lines of the run's guest log with
	// Seq > after, ordered by Seq. An unknown run (or another tenant's) is ErrNotFound.
	ListGuestLog(ctx context.Context, tenantID, runID string, after int64, limit int) ([]GuestLogLine, error)
	// CountRuns counts by status the runs ListRuns lists with f, over every page: f's Status,
	// Cursor and Limit are not read. A status no run has is absent.
	CountRuns(ctx context.Context, tenantID string, f RunFilter) (map[RunStatus]int, error)
	// RunLease says which host (ClaimParams.Owner) holds the run's lease and until when; ""
	// and nil when none does. A lease past its time is reported as it stands: the caller
	// compares expires with the clock.
	RunLease(ctx context.Context, tenantID, runID string) (owner string, expires *time.Time, err error)
	// CancelRun marks a live run cancelled, clears its lease, deletes its snapshot and notifies
	// hosts (NoticeCancel). A terminal run is ErrConflict.
	CancelRun(ctx context.Context, tenantID, runID string) (Run, error)
	// RequestCancel asks a pending or running run to cancel itself: it records when
	// (CancelRequestedAt, kept from the first request) and until when the workflow may
	// compensate (CancelGraceUntil = graceUntil, from the first request), makes a suspended run
	// claimable now, and notifies hosts (NoticeCancelRequested, and a wake). A terminal run is
	// ErrConflict; a nondeterministic one too (no code of it can run: terminate it).
	RequestCancel(ctx context.Context, tenantID, runID string, graceUntil time.Time) (Run, error)

	// PauseRun pauses a live run of the tenant: one no host holds (pending, suspended, or its
	// holder's lease run out) is made paused at once; one a host holds gets PausedAt and the
	// hosts are told (NoticePauseRequested): it pauses at its next durable call (HoldPaused).
	// A paused run is returned as it is. A terminal run is ErrConflict; a nondeterministic one
	// too (it runs nothing already).
	PauseRun(ctx context.Context, tenantID, runID string) (Run, error)
	// UnpauseRun resumes a paused run of the tenant: it becomes pending (never activated) or
	// running again, claimable at its wake time as it stood (a sleep's end, a retry's, now for
	// a run held mid-pass; an event for a run paused in a wait), and the hosts are woken. A
	// live run whose pause was asked but not yet held has the ask withdrawn. With to, the run
	// also moves to to.Version and to.Digest when it is still what the caller checked (on
	// to.From, with to.Entries journal entries; ErrConflict otherwise), its snapshot deleted.
	// A run whose workflow or version is paused is ErrConflict (resume the workflow); a run
	// neither paused nor pausing is returned as it is; a terminal one is ErrConflict.
	UnpauseRun(ctx context.Context, tenantID, runID string, to *RunMove) (Run, error)
	// HoldPaused ends the activation of a run that is to pause: it writes held (when not nil)
	// as CommitStep does, makes the run paused, available now, and releases the lease, in one
	// transaction, and says true. Unless always is set (a step's attempts ran out under
	// abi.ExhaustedPause), it does so only when the run's PausedAt is set; otherwise (the pause
	// was withdrawn) it writes nothing and says false. Fenced.
	HoldPaused(ctx context.Context, l Lease, held *Step, always bool) (bool, error)
	// PauseWorkflow pauses a workflow of the tenant (version "") or one version of it: no run
	// of it is activated and runs created for it are created paused, until ResumeWorkflow; its
	// live runs are paused as PauseRun pauses each, in one transaction that no run's creation
	// can slip past. Pausing it again changes nothing. Returns how many runs it paused or asked.
	PauseWorkflow(ctx context.Context, tenantID, workflow, version string) (int, error)
	// ResumeWorkflow lifts a pause PauseWorkflow set (the same version, "" for the whole
	// workflow) and resumes, as UnpauseRun does, every paused run of it that no remaining pause
	// covers, however it was paused. A workflow not paused so is ErrNotFound. Returns how many
	// runs it resumed.
	ResumeWorkflow(ctx context.Context, tenantID, workflow, version string) (int, error)
	// ListWorkflowPauses returns the tenant's paused workflows and versions, by workflow and
	// version.
	ListWorkflowPauses(ctx context.Context, tenantID string) ([]WorkflowPause, error)

	// ClaimRuns leases up to Limit runnable runs (live, available_at <= now, lease absent or
	// expired) with FOR UPDATE SKIP LOCKED, bumping each lease epoch, setting status running,
	// and returns them with their journals: from the snapshot on when the run has one
	// (Claim.Snapshot, Claim.JournalFrom), at most p.JournalWindow entries of each when it is
	// set (Claim.JournalMore when more follow). Taking a run whose lease ran out (its holder never
	// handed it back: the host died, hung, or lost the store) counts a fault against it, as
	// Fault does, with that as the reason.
	ClaimRuns(ctx context.Context, p ClaimParams) ([]Claim, error)
	// ResumeRun leases the run p names when a claim could take it now (live and due, no live
	// lease on it, its tenant under its cap), as ClaimRuns would, and returns it with its
	// journal from p.FromSeq on (JournalFrom = p.FromSeq, no Snapshot; at most p.JournalWindow
	// entries when it is set, Claim.JournalMore when more follow); ok is false, with
	// nothing written, when it is not claimable.
	// When entry p.FromSeq is a sleep that is due, it is marked elapsed (completed at its wake
	// time) under the new lease first, as the pass would have marked it.
	// A host resumes a run it parked this way (engine/parking.go): by id, and reading only the
	// journal the parked pass has not seen.
	ResumeRun(ctx context.Context, p ResumeParams) (c Claim, ok bool, err error)
	// ReleaseOwned hands back every live lease owner holds on a run not in keep, the runs
	// available now, and says how many it released. A host calls it after a claim or a start
	// whose answer it never got (the connection died after the store committed): the store may
	// have leased it runs it does not know of, which would otherwise wait for their leases to
	// run out. No fault is counted: those runs never ran.
	ReleaseOwned(ctx context.Context, owner string, keep []string) (int, error)
	// NextWakeup is the earliest time a live run becomes claimable (its available_at, or its
	// lease expiry if later); ok=false when there is none.
	NextWakeup(ctx context.Context) (at time.Time, ok bool, err error)
	// ExtendLeases renews the given leases and returns the ones that are still held. It never
	// waits for a run another transaction is writing: such a lease may stay unrenewed this
	// once (its writer renews or releases it), and is returned as held.
	ExtendLeases(ctx context.Context, leases []Lease, leaseFor time.Duration) ([]Lease, error)

	// CommitStep inserts or updates the step row (by RunID and Key) and keeps the lease at
	// least half of leaseFor ahead (renewing it, or not while more than half remains), in one
	// transaction. An update keeps the row's Seq, Kind, Event, Match and StartedAt (when the
	// step first started). Fenced.
	CommitStep(ctx context.Context, l Lease, s Step, leaseFor time.Duration) error
	// Suspend writes s (when not nil), releases the lease and makes the run available at wakeAt
	// (nil: only an event wakes it), in one transaction. Fenced. A run asked to cancel whose
	// journal has no cancelled entry (its workflow has not been told) is made available now
	// instead: a cancel asked while the run was leased left its available_at alone, and the
	// host may have suspended the run before it heard of the cancel.
	Suspend(ctx context.Context, l Lease, s *Step, wakeAt *time.Time) error
	// CommitAndSuspend writes the held step as CommitStep does and s, and suspends the run as
	// Suspend does, in one transaction: the engine holds back a step's commit until the guest's
	// next durable call, and when that call is a sleep that suspends the run the two go
	// together (the shape of a run that sleeps after each step). Fenced.
	CommitAndSuspend(ctx context.Context, l Lease, held, s Step, wakeAt *time.Time) error
	// SaveSnapshot writes held (when not nil) as CommitStep does and replaces the run's
	// snapshot with snap, renewing the lease as CommitStep does, in one transaction: a snapshot
	// is written in the same fenced commit as the journal entry before it. Fenced.
	SaveSnapshot(ctx context.Context, l Lease, held *Step, snap Snapshot, leaseFor time.Duration) error
	// JournalPage returns up to limit journal entries of the leased run with Seq >= from,
	// ordered by Seq, and whether more follow them. Fenced (a read under the lease: ErrLeaseLost
	// when it is not held).
	JournalPage(ctx context.Context, l Lease, from, limit int) (steps []Step, more bool, err error)
	// Finish makes the run completed (output), failed or nondeterministic (errInfo), releases
	// the lease and deletes the run's snapshot (a finished run never resumes from it). Fenced.
	// guestLog is what the guest logged in the activation that ends the run, kept as
	// AppendGuestLog keeps lines (its bounds) in the same transaction: a reader who sees the
	// run ended sees its lines, and an end costs no statement of its own for them. An end that
	// does not commit (fenced out, an error) keeps none of them.
	Finish(ctx context.Context, l Lease, status RunStatus, output json.RawMessage, errInfo *abi.ErrorInfo, guestLog []GuestLogLine) error
	// CommitAndFinish writes step s as CommitStep does and finishes the run as Finish does, in
	// one transaction: the engine holds back a step's commit until the guest's next durable
	// call, and when that call is the run's end the two go together. Fenced. guestLog as for
	// Finish.
	CommitAndFinish(ctx context.Context, l Lease, s Step, status RunStatus, output json.RawMessage, errInfo *abi.ErrorInfo, guestLog []GuestLogLine) error
	// RestartRun creates a pending run, claimable now, that restarts the ended run sourceID of
	// the tenant: next (resolved: Version and Digest taken as given) with RestartedFrom =
	// sourceID and, copied from the source in the same transaction, its journal entries with
	// Seq < keep (0: none, a restart from scratch), which the new run replays instead of running.
	// An unknown source is ErrNotFound; a live one ErrConflict; keep past the source's journal
	// ErrInvalid... as ErrConflict.
	RestartRun(ctx context.Context, sourceID string, keep int, next NewRun) (Run, error)
	// ForkRun creates a run as RestartRun does, from a source that may also be live (a
	// what-if beside a run still in flight). Every entry kept must have ended (completed,
	// failed, timed out or cancelled): one that has not is ErrConflict, as in RestartRun,
	// checked in the same transaction as the copy so a source that moves on meanwhile cannot
	// hand the fork an entry it would change. The source is never changed.
	ForkRun(ctx context.Context, sourceID string, keep int, next NewRun) (Run, error)
	// FinishAndContinue ends the run as CommitAndFinish does (held: its last step, when not
	// nil) and, in the same transaction, creates next: a pending run of the same tenant and
	// workflow, continuing this one (ContinuedFrom, and this run's ContinuedAs), claimable at
	// next.NotBefore (nil: now). The ended run's idempotency key and the events signalled to it
	// that no wait took move to the new run, so a key names the newest run of a chain and no
	// event is lost between the two. next.Version and next.Digest are taken as given. Fenced.
	// guestLog, the ended run's, as for Finish.
	FinishAndContinue(ctx context.Context, l Lease, held *Step, status RunStatus, output json.RawMessage, errInfo *abi.ErrorInfo, next NewRun, guestLog []GuestLogLine) (Run, error)
	// Release hands the lease back, the run available now, changing nothing else (a graceful
	// shutdown: it is no fault of the run's). Fenced.
	Release(ctx context.Context, l Lease) error
	// Fault hands the lease back after an activation that ended in a fault that is not the
	// workflow's (the store unreachable mid-pass, a module that could not be loaded): the run
	// is available again at retryAt, and the fault is counted against it with reason (see
	// Claim.Faults). Fenced.
	Fault(ctx context.Context, l Lease, reason string, retryAt time.Time) error

	// ReachWait is called when a pass first reaches wait step s (Kind wait, Status waiting,
	// Event, Match, WakeAt = timeout or nil). In one transaction it resolves s from the oldest
	// matching event: one signalled to this run (consumed) or a broadcast received since the run
	// was created and not yet consumed by it; then it journals s as completed with the payload
	// and EventID, keeps and renews the lease, and returns the row. Otherwise it journals s as
	// waiting, releases the lease, makes the run available at s.WakeAt and returns nil. Fenced.
	ReachWait(ctx context.Context, l Lease, s Step, leaseFor time.Duration) (*Step, error)
	// ParkWait suspends the run again on its waiting step key until wakeAt (nil: until an
	// event), the lease released. If an event resolved the step after the activation loaded its
	// journal, it instead keeps and renews the lease and returns the resolved row, so a signal
	// that lands during a replay is never overwritten by the replay's suspension. Fenced.
	ParkWait(ctx context.Context, l Lease, key string, wakeAt *time.Time, leaseFor time.Duration) (*Step, error)
	// TimeoutWait journals the waiting step key of the run as StepTimedOut with Output
	// abi.WaitTimeout at completedAt, unless an event resolved it first; returns the row as it
	// now stands. Fenced.
	TimeoutWait(ctx context.Context, l Lease, key string, completedAt time.Time, leaseFor time.Duration) (Step, error)
	// CancelWait journals the waiting step key of the run as StepCancelled with Error info at
	// completedAt, unless an event resolved it first; returns the row as it now stands, and
	// renews the lease. Fenced.
	CancelWait(ctx context.Context, l Lease, key string, completedAt time.Time, info abi.ErrorInfo, leaseFor time.Duration) (Step, error)

	// StartChild starts a child run for the parent step s (Kind child, Seq, Key, StartedAt,
	// WakeAt: the parent's deadline or nil), in one transaction fenced by the parent's lease
	// l, after writing held (when not nil) as CommitStep does. child (resolved: Version and
	// Digest taken as given) is created pending, claimable now, with child.IdempotencyKey (its
	// id, required) and link; the hosts are woken. When that key already names a run of the
	// tenant and workflow that is not this step's child, no run is created and s is journaled
	// failed with abi.CodeChildRefused (final), the lease renewed. Otherwise an awaited s is
	// journaled waiting and the parent suspended (lease released, available at s.WakeAt), until
	// the child's chain ends (see below); a detached s is journaled completed with an
	// abi.ChildStarted output, the lease renewed. Returns s as journaled and the child's run
	// id ("" when refused).
	//
	// The end of an awaited child never gets lost: in the transaction in which the last run of
	// its chain (one that no retry or continue-as-new continues) ends, whatever ends it, the
	// parent's step, if still waiting, is completed with the child's output (completed) or
	// failed with abi.CodeChildFailed (failed or cancelled: non-retryable, details the child's
	// runId, status and error), and the parent made available now, every host woken. A run that
	// continues a child is its parent's child in its place.
	StartChild(ctx context.Context, l Lease, held *Step, s Step, child NewRun, link ChildLink, leaseFor time.Duration) (Step, string, error)
	// ChildrenOf returns the children of a run of the tenant, oldest first (none for an
	// unknown run).
	ChildrenOf(ctx context.Context, tenantID, runID string) ([]ChildRef, error)
	// OrphanedChildren returns up to limit children that a parent's end should have closed and
	// did not: runs not ended whose link's ParentClose is abi.ParentCloseCancel, whose parent run
	// has ended (or is swept), and of which no cancel has been asked. The engine closes a
	// parent's children after the end commits (ABI.md §4.16), and a host that dies between the
	// two leaves them running; its sweep finds them here. Oldest link first.
	OrphanedChildren(ctx context.Context, limit int) ([]OrphanedChild, error)
	// ParentOf returns the link of a run of the tenant to its parent; ok is false when the run
	// is no child (or unknown).
	ParentOf(ctx context.Context, tenantID, runID string) (link ChildLink, ok bool, err error)

	// ForkBranches forks the branches of parallel_run's step s (Kind parallel, Seq, Key,
	// StartedAt, WakeAt: the parent's deadline or nil) in one transaction fenced by the
	// parent's lease l, after writing held (when not nil) as CommitStep does: each of
	// f.Branches is created pending with its IdempotencyKey (required) and linked to the
	// parent as a child (BranchKey(s.Key, i), parentClose cancel, awaited); its journal is a
	// copy of the parent's entries before s.Seq and, at s.Seq, a KindBranch entry with key
	// s.Key and an abi.Branch output. The first f.MaxConcurrent branches are claimable now,
	// the others held (not claimable) until a slot frees. s is journaled waiting and the
	// parent suspended (lease released, available at s.WakeAt). Returns s as journaled and the
	// branches' run ids, in branch order. A branch id already taken is ErrConflict.
	//
	// The join is decided by the store, in the transaction that ends a branch (whatever ends
	// it): by f.Join (parallel.go), the parent's step, if still waiting, is completed with
	// an abi.ParallelResult or failed with abi.CodeBranchFailed (BranchFailure), and the
	// parent made available now, every host woken; undecided, the held branch of the lowest
	// index is made claimable in its place. Branches still live once the join is decided are
	// the parent's to cancel (their entries say cancelled); their ends change nothing.
	ForkBranches(ctx context.Context, l Lease, held *Step, s Step, f Fork, leaseFor time.Duration) (Step, []string, error)

	// Signal sends an event to one run. If the run waits on a step it matches, the first such
	// step (by Seq) is completed with the payload and the run made available now (Delivered);
	// otherwise the event is buffered for the run (at most p.MaxBuffered; ErrLimit past that). A
	// terminal run is ErrConflict. With a SignalID the run has seen before, nothing changes,
	// whatever the run's status: the result is the first sending's, marked Duplicate.
	Signal(ctx context.Context, p SignalParams) (SignalResult, error)
	// SignalWithStart sends an event to the run r.IdempotencyKey names (required), creating
	// that run first, pending, when there is none or it has ended (Terminal): the key then moves
	// to the new run and the ended run keeps no key. The run is found or created and the event
	// delivered or kept for it in one transaction, so a new run holds the event before its first
	// activation. r is resolved (Version, Digest, RetentionDays) as for CreateRun; sig's RunID
	// is ignored and its other fields are read as Signal reads them.
	SignalWithStart(ctx context.Context, r NewRun, sig SignalParams) (SignalWithStartResult, error)
	// Broadcast keeps the event for the tenant and, in the same transaction, resolves every run
	// of the tenant waiting on a step it matches and creates the runs it triggers.
	Broadcast(ctx context.Context, p BroadcastParams) (BroadcastResult, error)
	// TriggeredBy returns the workflows whose latest version declares event as a trigger.
	TriggeredBy(ctx context.Context, tenantID, event string) ([]Workflow, error)

	// PutSecret creates or replaces a tenant's secret with a sealed value (the tenant must
	// exist: ErrNotFound).
	PutSecret(ctx context.Context, tenantID, name string, value SecretValue) (Secret, error)
	// GetSecret returns a secret's stored value; ok=false when there is none.
	GetSecret(ctx context.Context, tenantID, name string) (value SecretValue, ok bool, err error)
	// SecretsNotUnder returns the tenant's secrets whose value is not sealed by key keyID
	// (rows from before encryption included), by name, with their values.
	SecretsNotUnder(ctx context.Context, tenantID, keyID string) ([]NamedSecretValue, error)
	// ReplaceSecretValue sets a secret's stored value to next if it is still prev (a PutSecret
	// or delete in between wins: ok=false), leaving its times alone: a value resealed is the
	// same value.
	ReplaceSecretValue(ctx context.Context, tenantID, name string, prev, next SecretValue) (ok bool, err error)
	// ListSecrets returns the tenant's secrets by name, without values.
	ListSecrets(ctx context.Context, tenantID string) ([]Secret, error)
	// DeleteSecret removes a secret; an unknown one is ErrNotFound.
	DeleteSecret(ctx context.Context, tenantID, name string) error
	// RecordOutbound appends to a run's outbound audit trail.
	RecordOutbound(ctx context.Context, rec OutboundRecord) error
	// ListOutbound returns a run's outbound audit trail in the order it was recorded; an
	// unknown run (or another tenant's) is ErrNotFound.
	ListOutbound(ctx context.Context, tenantID, runID string) ([]OutboundRecord, error)

	// CreateSchedule stores a new schedule (ErrConflict when the tenant has one with its ID,
	// ErrNotFound when there is no such tenant) and returns it as stored.
	CreateSchedule(ctx context.Context, s Schedule) (Schedule, error)
	// GetSchedule returns one of the tenant's schedules.
	GetSchedule(ctx context.Context, tenantID, id string) (Schedule, error)
	// ListSchedules returns the tenant's schedules by ID.
	ListSchedules(ctx context.Context, tenantID string) ([]Schedule, error)
	// DeleteSchedule removes a schedule; an unknown one is ErrNotFound. Runs it started stay.
	DeleteSchedule(ctx context.Context, tenantID, id string) error
	// SetSchedulePaused pauses or resumes a schedule. A resume (paused false) also sets its
	// next fire time and due time and drops a buffered fire time: a resumed schedule starts
	// from now, it does not catch up the time it was paused. Returns the schedule as stored.
	SetSchedulePaused(ctx context.Context, tenantID, id string, paused bool, next, due time.Time) (Schedule, error)
	// DueSchedules returns up to limit schedules, of every tenant, that are not paused and are
	// due at now (DueAt <= now) or keep a buffered fire time, soonest due first.
	DueSchedules(ctx context.Context, now time.Time, limit int) ([]Schedule, error)
	// NextScheduleDue is the earliest DueAt, or BufferedFireAt when it is set, of a schedule
	// that is not paused (a buffered fire time is due as soon as the live run ends, which only
	// a look tells); ok=false when there is none.
	NextScheduleDue(ctx context.Context) (at time.Time, ok bool, err error)
	// AdvanceSchedule writes a step of a schedule's state if it still stands at a.From and
	// a.FromBuffered (ok=false, nothing written, otherwise or when it is gone).
	AdvanceSchedule(ctx context.Context, a ScheduleAdvance) (ok bool, err error)

	// SweepExpired deletes up to limit terminal runs whose retention has passed (their
	// journals, events and lifecycle logs with them), skipping rows other sweepers hold, and returns how many
	// it deleted. Live and nondeterministic runs are never swept.
	SweepExpired(ctx context.Context, limit int) (int, error)
	// PruneBroadcasts deletes up to limit broadcast events received before before, oldest
	// first, skipping rows others hold, and returns how many it deleted. A wait reached later
	// no longer sees them, and their event ids may be sent again. Events sent to one run stay
	// until a wait takes them or the run is swept.
	PruneBroadcasts(ctx context.Context, before time.Time, limit int) (int, error)

	// Listen delivers notices until ctx ends or the connection fails; the caller reconnects by
	// calling it again. Once it listens it delivers one NoticeWake, because notices sent while
	// nobody listened are lost and the caller should look for work.
	Listen(ctx context.Context, notices chan<- Notice) error

	// Close releases the store's connections.
	Close()
}

// urgentKey marks a context whose writes are urgent (Urgent).
type urgentKey struct{}

// Urgent returns ctx with its writes marked urgent: they are a quiet tenant's, in a slot the
// engine keeps for tenants with nothing else in flight (engine/fairness.go), and a store that
// groups writes sends them at once, beside the groups, not queued behind them. A hint about
// order only: every write is fenced and committed the same way.
func Urgent(ctx context.Context) context.Context { return context.WithValue(ctx, urgentKey{}, true) }

// IsUrgent says whether ctx's writes are urgent (Urgent).
func IsUrgent(ctx context.Context) bool { v, _ := ctx.Value(urgentKey{}).(bool); return v }
