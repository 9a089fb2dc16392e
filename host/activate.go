package host

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"

	"github.com/wfhost/wfhost/abi"
)

// errWallTime is the cause of an activation's own deadline, told apart from the caller's.
var errWallTime = errors.New("activation wall time exceeded")

// Activate runs one pass of a workflow on an instance of m in its post-initialisation state
// (a fresh one, or a used one reset to it: see compiledModule). It returns the
// Result when wfhost_run returned after complete or fail; otherwise an error that wraps the
// Handler error that unwound the guest, a *GuestError for a guest fault, or the caller's
// context error.
func (r *Runtime) Activate(ctx context.Context, m *Module, a Activation) (res Result, err error) {
	a.Limits.MemoryPages = cmp.Or(a.Limits.MemoryPages, DefaultLimits().MemoryPages)
	a.Limits.WallTime = cmp.Or(a.Limits.WallTime, DefaultLimits().WallTime)
	a.Limits.MaxOutputBytes = cmp.Or(a.Limits.MaxOutputBytes, DefaultLimits().MaxOutputBytes)
	a.Limits.MaxStepOutputBytes = cmp.Or(a.Limits.MaxStepOutputBytes, DefaultLimits().MaxStepOutputBytes)
	if len(a.Input) == 0 {
		a.Input = []byte("null")
	}
	stats := a.Stats
	if stats == nil {
		stats = &Stats{}
	}
	if m.Extism {
		return r.activateExtism(ctx, m, a, stats)
	}
	rt, cm, compile, err := r.compiledFor(ctx, a.Tenant, m, a.Limits.MemoryPages)
	stats.Compile = compile
	if err != nil {
		return Result{}, err
	}
	st := newActivationState(a)
	gctx, end, err := r.onCoreWithin(ctx, st, a.Tenant, a.Limits.WallTime, errWallTime)
	if err != nil {
		return Result{}, fmt.Errorf("activation %w", err)
	}
	defer end()

	pooled, made, terr := cm.take(gctx, rt, m, st)
	if terr != nil {
		return Result{}, terr.st.classify(ctx, gctx, terr.stage, terr.err)
	}
	stats.Instantiate = made
	inst := pooled.mod
	st.memoryBytes = func() uint64 { return memorySize(inst) }
	defer func() {
		// The guest is done: resetting its instance is the host's work.
		st.core.give()
		if mem := inst.Memory(); mem != nil {
			stats.MemoryBytes = uint64(mem.Size())
		}
		// After a guest fault the instance is not kept: a trap may have left wazero's call
		// stack grown (unbounded recursion grows it to 100 MB before it overflows), and that
		// stack lives with the instance (RATIONALE.md, "Memory after hostile guests").
		var ge *GuestError
		pooled.faulted = errors.As(err, &ge) || st.interrupted
		stats.Discarded = cm.release(context.WithoutCancel(ctx), pooled)
	}()
	code, base := "", []byte(nil)
	if cp, ok := a.Handler.(Checkpointer); ok && pooled.guest != nil {
		st.checkpointer = cp
	}
	if pooled.guest != nil && (st.checkpointer != nil || a.Resume != nil) {
		st.snap = pooled.guest
		st.snap.Reset()
		code, base = cm.snapshotCode(m)
	}
	var args []uint64
	if a.Resume != nil {
		if st.snap == nil || code == "" || a.Resume.Code != code {
			return Result{}, fmt.Errorf("%w: it is of other code than the module's as loaded here", ErrRestore)
		}
		if args, err = st.restore(gctx, a.Resume.Data, base); err != nil {
			pooled.faulted = true
			return Result{}, fmt.Errorf("%w: %v", ErrRestore, err)
		}
	} else {
		namePtr, err := st.place(gctx, pooled, []byte(a.Workflow))
		if err != nil {
			return Result{}, st.classify(ctx, gctx, abi.ExportAlloc, err)
		}
		inputPtr, err := st.place(gctx, pooled, a.Input)
		if err != nil {
			return Result{}, st.classify(ctx, gctx, abi.ExportAlloc, err)
		}
		args = []uint64{api.EncodeU32(namePtr), api.EncodeU32(uint32(len(a.Workflow))),
			api.EncodeU32(inputPtr), api.EncodeU32(uint32(len(a.Input)))}
	}
	_, err = pooled.run.Call(gctx, args...)
	for {
		switch {
		case st.snap != nil && st.snap.Rewinding():
			// The rewind never reached the call it was taken at: nothing of the pass ran.
			pooled.faulted = true
			return Result{}, fmt.Errorf("%w: the rewind did not reach its call: %v", ErrRestore, err)
		case st.checkpointing && err != nil:
			pooled.faulted = true
			return Result{}, fmt.Errorf("%w: %v", ErrCheckpoint, firstLine(err))
		case st.checkpointing:
			if err := st.checkpoint(gctx, code, base, args); err != nil {
				pooled.faulted = true
				return Result{}, fmt.Errorf("%w: %v", ErrCheckpoint, err)
			}
			_, err = pooled.run.Call(gctx, args...)
			continue
		}
		return st.passEnded(ctx, gctx, err)
	}
}

// passEnded is how a pass ended once wfhost_run returned with err: the result the guest
// reported, or the fault of a call that failed or returned without reporting one.
func (st *state) passEnded(ctx, gctx context.Context, err error) (Result, error) {
	st.stdout.flush()
	st.stderr.emitTrace() // a stack trace is logged whole when the pass ends (guestlines.go)
	if err != nil && st.result != nil && (st.result.Continue != nil || st.branchEnded) && st.abort == nil && st.fault == nil {
		// continue_as_new or branch_done ended the pass by unwinding the guest (errContinued,
		// errBranchDone).
		return *st.result, nil
	}
	if err != nil {
		err = st.classify(ctx, gctx, abi.ExportRun, err)
		// A guest fault becomes the run's error: its message may quote what the guest wrote (a
		// name, an option, its stderr), so it is made storable and redacted like a guest's own.
		var ge *GuestError
		if errors.As(err, &ge) {
			ge.Info = st.storableError(ge.Info)
		}
		return Result{}, err
	}
	if st.result == nil {
		return Result{}, guestError(abi.CodeNoResult, "%s returned without calling complete or fail%s", abi.ExportRun, st.stderrTail())
	}
	return *st.result, nil
}

// place copies b into a buffer the guest allocates.
func (st *state) place(ctx context.Context, inst *instance, b []byte) (uint32, error) {
	res, err := inst.alloc.Call(ctx, api.EncodeU32(uint32(len(b))))
	if err != nil {
		return 0, err
	}
	ptr := api.DecodeU32(res[0])
	if !inst.mod.Memory().Write(ptr, b) {
		return 0, guestError(abi.CodeABIViolation, "%s(%d) returned %d, outside the guest's memory", abi.ExportAlloc, len(b), ptr)
	}
	return ptr, nil
}

// classify turns the error of a call into the guest into what Activate returns.
func (st *state) classify(ctx, gctx context.Context, fn string, err error) error {
	var ge *GuestError
	timedOut := ""
	if st.abort == nil && st.fault == nil && ctx.Err() == nil {
		timedOut = st.interruptedAttempt(gctx)
	}
	switch {
	case st.abort != nil:
		return st.abort
	case st.fault != nil:
		return st.fault
	case timedOut != "":
		// Whatever the guest did as it was stopped mid-callback (a trap, a reply to a request
		// cut short), the attempt ran out of time.
		return st.attemptTimedOut(ctx, timedOut)
	case errors.As(err, &ge):
		return ge
	case ctx.Err() != nil:
		return fmt.Errorf("activation stopped: %w", context.Cause(ctx))
	case errors.Is(context.Cause(gctx), errWallTime):
		return guestError(abi.CodeDeadline, "the activation ran past its wall-time limit of %v (in %s)", st.limits.WallTime, fn)
	}
	var exit *sys.ExitError
	if errors.As(err, &exit) {
		return guestError(abi.CodeTrap, "the guest exited with code %d in %s%s", exit.ExitCode(), fn, st.stderrTail())
	}
	return guestError(abi.CodeTrap, "the guest trapped in %s: %s%s", fn, firstLine(err), st.stderrTail())
}

// firstLine drops the wasm stack trace wazero appends to a trap: the first line says what
// happened, and the guest's stderr (added separately) says why.
func firstLine(err error) string {
	msg := err.Error()
	if i := strings.IndexByte(msg, '\n'); i > 0 {
		msg = msg[:i]
	}
	return msg
}
