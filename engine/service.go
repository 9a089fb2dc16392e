package engine

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/host"
	"github.com/wfhost/wfhost/store"
)

// Service serves the requests of the API and of embedders: it checks what a client sent
// (clientinput.go), applies the tenant's limits and makes the store calls. What is only a read
// of the store (a run, its journal, the modules, workflows, tenants, secrets' names, the
// outbound trail) is not here: callers read the store itself. It needs no Start: a Service
// serves as soon as New returns, and a run it starts while the Executor is stopped is queued
// for whichever host claims it. Safe for concurrent use.
type Service struct {
	*shared
	// exec runs what this host starts at once, when it has a free slot (startRun), and stops
	// a cancelled run's activation on this host.
	exec *Executor
}

// Limits returns the tenant's effective limits: its overrides, the operator's defaults for the
// rest, as this host last read them (within limitsTTL).
func (s *Service) Limits(ctx context.Context, tenantID string) (store.Limits, error) {
	return s.limits.get(ctx, tenantID)
}

// DeployResult is what Deploy stored.
type DeployResult struct {
	Module    store.Module
	Workflows []store.Workflow
	// Upgrade is the upgrade gate's report of a deploy made with DeployOptions.Upgrade.
	Upgrade *UpgradeReport
}

// Deploy validates and compiles a module and binds the workflows it declares to it. With
// replace, workflow versions already bound to another module are rebound (a hotfix: their live
// runs replay against the new code); without it they are store.ErrConflict.
func (s *Service) Deploy(ctx context.Context, tenantID string, wasm []byte, replace bool) (DeployResult, error) {
	return s.DeployWith(ctx, tenantID, wasm, DeployOptions{Replace: replace})
}

// DeployOptions are how a deploy binds its module.
type DeployOptions struct {
	// Replace rebinds versions already bound to another module (Deploy's replace).
	Replace bool
	// Upgrade, when set, puts the deploy through the upgrade gate (upgrade.go): every open run
	// of the workflows the module declares is replayed against it first, and the policy says
	// what follows.
	Upgrade UpgradePolicy
}

// DeployWith is Deploy with options.
func (s *Service) DeployWith(ctx context.Context, tenantID string, wasm []byte, opts DeployOptions) (DeployResult, error) {
	if err := opts.Upgrade.check(); err != nil {
		return DeployResult{}, fmt.Errorf("deploy: %w", err)
	}
	d, err := s.prepareDeploy(ctx, tenantID, wasm)
	if err != nil {
		return DeployResult{}, err
	}
	if opts.Upgrade != UpgradeOff {
		return s.deployThroughGate(ctx, d, opts)
	}
	stored, err := s.cfg.Store.PutModule(ctx, d.mod, d.wfs, opts.Replace)
	if err != nil {
		return DeployResult{}, fmt.Errorf("deploy: %w", err)
	}
	return s.deployed(d, stored), nil
}

// deployment is a module a deploy validated and compiled, and the workflows it binds.
type deployment struct {
	tenantID string
	m        *host.Module
	mod      store.Module
	wfs      []store.Workflow
	limits   store.Limits
}

// prepareDeploy checks and compiles a module for tenantID.
func (s *Service) prepareDeploy(ctx context.Context, tenantID string, wasm []byte) (deployment, error) {
	limits, err := s.Limits(ctx, tenantID)
	if err != nil {
		return deployment{}, fmt.Errorf("deploy: %w", err)
	}
	m, err := s.loadUpload(ctx, tenantID, wasm, limits)
	if err != nil {
		return deployment{}, fmt.Errorf("deploy: %w", err)
	}
	s.obs.compiled(tenantID, m.CompileTime)
	mod := store.Module{TenantID: tenantID, Digest: m.Digest, Size: len(wasm), ABIVersion: m.ABIVersion, Bytes: wasm}
	wfs := make([]store.Workflow, 0, len(m.Description.Workflows))
	for _, d := range m.Description.Workflows {
		var retry abi.RetryPolicy
		if d.Retry != nil {
			retry = *d.Retry
		}
		wfs = append(wfs, store.Workflow{
			TenantID: tenantID, Name: d.Name, Version: d.Version, Digest: m.Digest,
			RetentionDays: d.RetentionDays, Retry: retry.Merge(abi.DefaultRetry()), Triggers: d.Triggers, OnEnd: d.OnEnd,
			Flow: d.Flow,
		})
	}
	return deployment{tenantID: tenantID, m: m, mod: mod, wfs: wfs, limits: limits}, nil
}

// loadUpload checks and compiles a module a client sent (a deploy's, a dry replay's) under the
// tenant's limits: its size, and the memory it needs.
func (s *Service) loadUpload(ctx context.Context, tenantID string, wasm []byte, limits store.Limits) (*host.Module, error) {
	if len(wasm) == 0 {
		return nil, fmt.Errorf("%w: empty module", ErrInvalid)
	}
	if len(wasm) > limits.MaxModuleBytes {
		return nil, fmt.Errorf("%w: module is %d bytes, the tenant's limit is %d", ErrTooLarge, len(wasm), limits.MaxModuleBytes)
	}
	m, err := s.cfg.Runtime.LoadAs(ctx, tenantID, wasm)
	if err != nil {
		if errors.Is(err, host.ErrInvalidModule) {
			return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
		}
		return nil, err
	}
	// A module that cannot fit in the tenant's memory could never run: refused now, not at
	// its first activation.
	if pages := cmp.Or(hostLimits(limits).MemoryPages, host.DefaultLimits().MemoryPages); m.MinMemoryPages > pages {
		return nil, fmt.Errorf("%w: the module needs at least %d pages (%d MiB) of memory; the tenant's memoryPages limit is %d (%d MiB)",
			ErrInvalid, m.MinMemoryPages, uint64(m.MinMemoryPages)*65536>>20, pages, uint64(pages)*65536>>20)
	}
	return m, nil
}

// deployed caches the module a deploy stored and wakes the executor for the runs it moved.
func (s *Service) deployed(d deployment, stored []store.Workflow) DeployResult {
	s.modules.put(d.tenantID, d.m)
	mod := d.mod
	mod.Bytes = nil
	s.exec.wake()
	return DeployResult{Module: mod, Workflows: stored}
}

// StartRequest asks for a new run.
type StartRequest struct {
	Workflow       string
	Version        string // "" takes the latest
	Input          json.RawMessage
	IdempotencyKey string
	RetentionDays  int // 0 takes the workflow's, then the engine's default; clamped to MaxRetentionDays
	// TimeoutMs > 0 gives the run a deadline that long after its start (a workflow deadline):
	// past it the run fails with abi.CodeRunTimeout at its next durable call, woken for it if
	// it sleeps or waits. At most abi.MaxDelay.
	TimeoutMs int64
	// Retry, when set, is the run's own retry policy (store.Run.Retry); its zero fields take
	// abi.DefaultRetry's. Its OnExhausted is also the default of the run's steps, over the
	// workflow's (a step's own wins): {Attempts: 1, OnExhausted: pause} pauses the run when a
	// step's attempts run out and never retries the run itself.
	Retry *abi.RetryPolicy
	// Priority, when set, is the run's priority in seconds of head start (abi.MinPriority to
	// abi.MaxPriority): claimed as if started that much earlier (later when negative). Nil
	// takes the workflow's flow default (abi.Flow.Priority), else 0.
	Priority *int
	// TokenID is the API token a client's start came with (the API sets it; "" for a start
	// in process): the run's triggeredBy names it.
	TokenID string
	// trigger is what started the run when it is not a client (a schedule: store.Trigger);
	// nil for a client's start, which the store tells by its absence.
	trigger *store.Trigger
}

// clientTrigger is what the store keeps of what started req's run: its own trigger, or for a
// client's start through the API the token it came with. A start in process keeps nothing,
// and reads back as a client's.
func clientTrigger(req StartRequest) *store.Trigger {
	if req.trigger == nil && req.TokenID != "" {
		return &store.Trigger{Kind: store.TriggerAPI, TokenID: req.TokenID}
	}
	return req.trigger
}

// runRetry is the retry policy a run started with req keeps: req's, its zero fields filled
// from abi.DefaultRetry, or nil.
func runRetry(req StartRequest) *abi.RetryPolicy {
	if req.Retry == nil {
		return nil
	}
	p := req.Retry.Merge(abi.DefaultRetry())
	return &p
}

// deadline is the deadline of a run started now with req.
func (s *Service) deadline(req StartRequest) *time.Time {
	if req.TimeoutMs <= 0 {
		return nil
	}
	d := s.cfg.Clock.Now().Add(time.Duration(req.TimeoutMs) * time.Millisecond).UTC().Truncate(time.Microsecond)
	return &d
}

// StartRun creates a run of the workflow, or with an idempotency key already used returns that
// run and created=false.
func (s *Service) StartRun(ctx context.Context, tenantID string, req StartRequest) (store.Run, bool, error) {
	return s.startRun(ctx, tenantID, req, nil)
}

// startRun is StartRun; created, when not nil, is called with a new run before any activation
// of it can begin on this host.
func (s *Service) startRun(ctx context.Context, tenantID string, req StartRequest, created func(store.Run)) (store.Run, bool, error) {
	if err := checkStart(req); err != nil {
		return store.Run{}, false, fmt.Errorf("start: %w", err)
	}
	limits, err := s.Limits(ctx, tenantID)
	if err != nil {
		return store.Run{}, false, fmt.Errorf("start: %w", err)
	}
	input, err := checkInput(req.Input, limits)
	if err != nil {
		return store.Run{}, false, fmt.Errorf("start: %w", err)
	}
	// One statement resolves the workflow and creates the run. A run this host can execute at
	// once is created leased to it and started here: no claim round trip, no wake notice.
	// Without a free slot, or near the tenant's cap, the store creates it pending, for the
	// claim to take in turn and count the cap over every host.
	// While other tenants are about, the tenant's starts beyond its share wait here, not in
	// the store (fairness.go).
	turnDone, err := s.exec.startGate(ctx, tenantID)
	if err != nil {
		return store.Run{}, false, fmt.Errorf("start %s: %w", req.Workflow, err)
	}
	var to store.LeaseTo
	life, slot := s.exec.takeSlot(tenantID, true)
	if slot != nil {
		to = store.LeaseTo{Owner: s.cfg.Owner, LeaseFor: s.cfg.LeaseFor, TenantCap: limits.Concurrency, Reserve: s.cfg.Concurrency + s.cfg.ReservedSlots}
	}
	claim, isNew, err := s.cfg.Store.CreateLeasedRun(ctx, store.NewRun{
		TenantID: tenantID, Workflow: req.Workflow, Version: req.Version,
		Input: input, IdempotencyKey: req.IdempotencyKey, RetentionDays: req.RetentionDays, Deadline: s.deadline(req),
		Retry: runRetry(req), DefaultRetentionDays: s.cfg.DefaultRetentionDays, MaxRetentionDays: s.cfg.MaxRetentionDays,
		Priority: req.Priority, Trigger: clientTrigger(req),
	}, to)
	turnDone()
	if errors.Is(err, abi.ErrFlowKey) {
		// The input names no key for the workflow's flow control: the caller's input is at fault.
		err = fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if slot != nil && claim.Lease.Epoch == 0 {
		s.exec.freeSlot(slot)
	}
	if err != nil {
		return store.Run{}, false, fmt.Errorf("start %s: %w", req.Workflow, err)
	}
	run := claim.Run
	if isNew {
		s.obs.runStarted(ctx, run)
		if created != nil {
			created(run)
		}
		if claim.Lease.Epoch > 0 {
			s.exec.execute(life, claim, slot)
		} else {
			// Queued: the claimer takes it, and this host's next starts queue behind it.
			s.exec.backlog.Store(true)
			s.exec.wake()
		}
	}
	return run, isNew, nil
}

// checkInput checks a new run's input against the tenant's limit and the storable rule, and
// returns it, null when there is none.
func checkInput(input json.RawMessage, limits store.Limits) (json.RawMessage, error) {
	if len(input) == 0 {
		input = json.RawMessage("null")
	}
	if len(input) > limits.MaxInputBytes {
		return nil, fmt.Errorf("%w: input is %d bytes, the tenant's limit is %d", ErrTooLarge, len(input), limits.MaxInputBytes)
	}
	if err := checkJSON("input", input); err != nil {
		return nil, err
	}
	return input, nil
}

// checkStart checks a start request's names and numbers; the input is checked once its size is.
func checkStart(req StartRequest) error {
	if err := validName("workflow", req.Workflow); err != nil {
		return err
	}
	if err := checkText("version", req.Version, abi.MaxNameLen); err != nil {
		return err
	}
	if err := checkText("idempotencyKey", req.IdempotencyKey, maxIdempotencyKeyBytes); err != nil {
		return err
	}
	if req.RetentionDays < 0 || req.RetentionDays > MaxRetentionDaysRequested {
		return invalid("retentionDays", "must be from 0 (the default) to %d, not %d", MaxRetentionDaysRequested, req.RetentionDays)
	}
	if req.TimeoutMs < 0 || req.TimeoutMs > abi.MaxDelay.Milliseconds() {
		return invalid("timeoutMs", "must be from 0 (no deadline) to %d, not %d", abi.MaxDelay.Milliseconds(), req.TimeoutMs)
	}
	if req.Retry != nil {
		if err := req.Retry.Validate(); err != nil {
			return invalid("retry", "is not a policy a host could follow: %v", err)
		}
	}
	if req.Priority != nil {
		if err := abi.CheckPriority("priority", *req.Priority); err != nil {
			return fmt.Errorf("%w: %v", ErrInvalid, err)
		}
	}
	return nil
}

// retention is a new run's retention: the start request's, else the workflow's, else the
// operator's default, never more than the operator's ceiling.
func (s *Service) retention(requested int, wf store.Workflow) int {
	return store.RetentionDays(requested, wf.RetentionDays, s.cfg.DefaultRetentionDays, s.cfg.MaxRetentionDays)
}

// ListRuns lists the tenant's runs, newest first.
func (s *Service) ListRuns(ctx context.Context, tenantID string, f store.RunFilter) ([]store.Run, string, error) {
	if err := checkRunFilter(f); err != nil {
		return nil, "", fmt.Errorf("list runs: %w", err)
	}
	return s.cfg.Store.ListRuns(ctx, tenantID, f)
}

// CountRuns counts by status the runs ListRuns lists with f, over all its pages; f's status,
// cursor and limit are checked but not read.
func (s *Service) CountRuns(ctx context.Context, tenantID string, f store.RunFilter) (map[store.RunStatus]int, error) {
	if err := checkRunFilter(f); err != nil {
		return nil, fmt.Errorf("count runs: %w", err)
	}
	return s.cfg.Store.CountRuns(ctx, tenantID, f)
}

// CancelRun asks a live run to cancel itself (cancel.go): the workflow is told at its next
// durable call and may compensate for up to grace (0: DefaultCancelGrace), then it is
// terminated. A run whose module does not handle a cancel (abi.FeatureCancel), or that cannot
// run (nondeterministic), is terminated at once, as TerminateRun does.
func (s *Service) CancelRun(ctx context.Context, tenantID, runID string, grace time.Duration) (store.Run, error) {
	if grace < 0 || grace > MaxCancelGrace {
		return store.Run{}, invalid("graceMs", "must be from 0 (the default, %v) to %d, not %d", DefaultCancelGrace, MaxCancelGrace.Milliseconds(), grace.Milliseconds())
	}
	if grace == 0 {
		grace = DefaultCancelGrace
	}
	run, err := s.cfg.Store.GetRun(ctx, tenantID, runID)
	if err != nil {
		return store.Run{}, err
	}
	if run.Status == store.StatusNondeterministic || run.Status == store.StatusPaused || run.Status.Terminal() {
		// A paused run runs nothing that could see the cancel: it ends now.
		return s.TerminateRun(ctx, tenantID, runID)
	}
	mod, err := s.exec.modules.get(ctx, tenantID, run.Digest)
	if err != nil {
		return store.Run{}, fmt.Errorf("cancel run %s: load its module: %w", runID, err)
	}
	if !mod.Description.Has(abi.FeatureCancel) {
		return s.TerminateRun(ctx, tenantID, runID)
	}
	run, err = s.cfg.Store.RequestCancel(ctx, tenantID, runID, s.cfg.Clock.Now().Add(grace).UTC().Truncate(time.Microsecond))
	if err != nil {
		return store.Run{}, err
	}
	// The notice reaches every host; this one need not wait for it. A run not active here
	// was made claimable by the request, and cancelRequested wakes the claimer for it.
	s.exec.cancelRequested(runID)
	return run, nil
}

// TerminateRun stops a live run at once, whatever it is doing: no code of it runs again.
// Its children whose parentClose policy is cancel are terminated with it (children.go).
func (s *Service) TerminateRun(ctx context.Context, tenantID, runID string) (store.Run, error) {
	return s.terminate(ctx, tenantID, runID, 0)
}

func (s *Service) terminate(ctx context.Context, tenantID, runID string, depth int) (store.Run, error) {
	run, err := s.cfg.Store.CancelRun(ctx, tenantID, runID)
	if err != nil {
		return store.Run{}, err
	}
	if run.Status == store.StatusCancelled {
		at := s.cfg.Clock.Now()
		if run.CompletedAt != nil {
			at = *run.CompletedAt
		}
		s.obs.runCancelled(ctx, run, at)
	}
	// The notice reaches every host; this one need not wait for it.
	s.exec.cancelLocal(runID)
	s.waiters.notify(runID, nil)
	s.closeChildren(ctx, tenantID, runID, depth)
	return run, nil
}

// SignalRequest is an event sent to one run.
type SignalRequest struct {
	RunID   string
	Event   string
	Payload json.RawMessage
	// SignalID makes the signal idempotent: sending the same id to the run again, for any
	// event, changes nothing and reports the first sending's outcome as a duplicate, also
	// after the run ended. Ids live as long as the run.
	SignalID string
}

// Signal sends an event to one run: it resolves the run's wait if one matches, or is kept for
// the run's next matching wait.
func (s *Service) Signal(ctx context.Context, tenantID string, req SignalRequest) (store.SignalResult, error) {
	limits, err := s.Limits(ctx, tenantID)
	if err != nil {
		return store.SignalResult{}, err
	}
	p, err := checkSignal(tenantID, req.RunID, req.Event, req.Payload, req.SignalID, limits)
	if err != nil {
		return store.SignalResult{}, err
	}
	end := s.obs.signalSent(ctx, tenantID, req.RunID, req.Event)
	res, err := s.cfg.Store.Signal(ctx, p)
	end(res, err)
	if err != nil {
		return store.SignalResult{}, err
	}
	s.signalled(res)
	return res, nil
}

// checkSignal checks an event for one run (its name, its payload against the tenant's limit,
// its id) and returns what the store is to be sent.
func checkSignal(tenantID, runID, event string, payload json.RawMessage, signalID string, limits store.Limits) (store.SignalParams, error) {
	payload, err := checkEvent(event, payload, limits)
	if err != nil {
		return store.SignalParams{}, err
	}
	if err := checkText("signalId", signalID, MaxEventIDBytes); err != nil {
		return store.SignalParams{}, fmt.Errorf("event %s: %w", event, err)
	}
	return store.SignalParams{TenantID: tenantID, RunID: runID, Event: event, Payload: payload,
		SignalID: signalID, MaxBuffered: limits.MaxBufferedEvents}, nil
}

// signalled wakes this host's claimer for a run an event was just delivered to (a duplicate
// delivered nothing now).
func (s *Service) signalled(res store.SignalResult) {
	if res.Delivered && !res.Duplicate {
		s.exec.wake()
	}
}

// SignalWithStartRequest sends an event to the run of a workflow that Start.IdempotencyKey
// names (the caller's id for the run, required), starting the run first if there is none or
// it has ended.
type SignalWithStartRequest struct {
	Start StartRequest
	// Event, Payload and SignalID are as in SignalRequest.
	Event    string
	Payload  json.RawMessage
	SignalID string
}

// SignalWithStart starts the run Start.IdempotencyKey names unless one with that key is open,
// and sends it the event either way: found or created and signalled in one transaction, so a
// new run holds the event before its first activation. A run with the key that has ended gives
// the key to the new run (and keeps its own record, without the key).
func (s *Service) SignalWithStart(ctx context.Context, tenantID string, req SignalWithStartRequest) (store.SignalWithStartResult, error) {
	fail := func(err error) (store.SignalWithStartResult, error) {
		return store.SignalWithStartResult{}, fmt.Errorf("signal with start: %w", err)
	}
	if err := checkStart(req.Start); err != nil {
		return fail(err)
	}
	if req.Start.IdempotencyKey == "" {
		return fail(invalid("idempotencyKey", "is required: it is the caller's id for the run to signal or start"))
	}
	limits, err := s.Limits(ctx, tenantID)
	if err != nil {
		return fail(err)
	}
	input, err := checkInput(req.Start.Input, limits)
	if err != nil {
		return fail(err)
	}
	// The run id is the store's to find or make.
	sig, err := checkSignal(tenantID, "", req.Event, req.Payload, req.SignalID, limits)
	if err != nil {
		return fail(err)
	}
	wf, err := s.cfg.Store.ResolveWorkflow(ctx, tenantID, req.Start.Workflow, req.Start.Version)
	if err != nil {
		return fail(err)
	}
	res, err := s.cfg.Store.SignalWithStart(ctx, store.NewRun{
		TenantID: tenantID, Workflow: wf.Name, Version: wf.Version, Digest: wf.Digest,
		Input: input, IdempotencyKey: req.Start.IdempotencyKey, RetentionDays: s.retention(req.Start.RetentionDays, wf),
		Deadline: s.deadline(req.Start), Retry: runRetry(req.Start),
		Trigger: &store.Trigger{Kind: store.TriggerSignalWithStart, Event: req.Event, EventID: req.SignalID},
	}, sig)
	if err != nil {
		return fail(err)
	}
	if res.Created {
		// Created pending, with the event kept for it: the claimer takes it in turn.
		s.obs.runStarted(ctx, res.Run)
		s.exec.backlog.Store(true)
		s.exec.wake()
	}
	s.signalled(res.Signal)
	return res, nil
}

// BroadcastRequest is an event sent to a whole tenant.
type BroadcastRequest struct {
	Event   string
	Payload json.RawMessage
	// EventID makes the event idempotent: sending the same id for the same event name again
	// changes nothing and returns what the first sending started.
	EventID string
}

// Broadcast sends an event to every run of the tenant waiting on it, keeps it for waits
// reached later by runs that started before it, and starts one run of every workflow that
// declares the event as a trigger (its input is the payload), all in one transaction.
func (s *Service) Broadcast(ctx context.Context, tenantID string, req BroadcastRequest) (store.BroadcastResult, error) {
	limits, err := s.Limits(ctx, tenantID)
	if err != nil {
		return store.BroadcastResult{}, err
	}
	payload, err := checkEvent(req.Event, req.Payload, limits)
	if err != nil {
		return store.BroadcastResult{}, err
	}
	if err := checkText("eventId", req.EventID, MaxEventIDBytes); err != nil {
		return store.BroadcastResult{}, fmt.Errorf("event %s: %w", req.Event, err)
	}
	triggered, err := s.cfg.Store.TriggeredBy(ctx, tenantID, req.Event)
	if err != nil {
		return store.BroadcastResult{}, err
	}
	if len(triggered) > 0 && len(payload) > limits.MaxInputBytes {
		return store.BroadcastResult{}, fmt.Errorf("event %s: %w: the payload starts runs and is %d bytes, the tenant's input limit is %d",
			req.Event, ErrTooLarge, len(payload), limits.MaxInputBytes)
	}
	p := store.BroadcastParams{TenantID: tenantID, Event: req.Event, Payload: payload, EventID: req.EventID}
	for _, wf := range triggered {
		key := ""
		if req.EventID != "" {
			key = "event:" + req.Event + ":" + req.EventID
		}
		p.Start = append(p.Start, store.NewRun{
			TenantID: tenantID, Workflow: wf.Name, Version: wf.Version, Digest: wf.Digest,
			Input: payload, IdempotencyKey: key, RetentionDays: s.retention(0, wf),
			Trigger: &store.Trigger{Kind: store.TriggerEvent, Event: req.Event, EventID: req.EventID},
		})
	}
	end := s.obs.broadcastSent(ctx, tenantID, req.Event)
	res, err := s.cfg.Store.Broadcast(ctx, p)
	end(res, err)
	if err != nil {
		return store.BroadcastResult{}, err
	}
	if !res.Duplicate {
		for _, r := range res.Started {
			s.obs.runStarted(ctx, r)
		}
	}
	if res.Resolved > 0 || len(res.Started) > 0 {
		s.exec.wake()
	}
	return res, nil
}

func checkEvent(event string, payload json.RawMessage, limits store.Limits) (json.RawMessage, error) {
	if err := validName("event", event); err != nil {
		return nil, err
	}
	if len(payload) == 0 {
		payload = json.RawMessage("{}")
	}
	if len(payload) > limits.MaxEventBytes {
		return nil, fmt.Errorf("event %s: %w: payload is %d bytes, the tenant's limit is %d", event, ErrTooLarge, len(payload), limits.MaxEventBytes)
	}
	if err := checkJSON("payload", payload); err != nil {
		return nil, fmt.Errorf("event %s: %w", event, err)
	}
	return payload, nil
}
