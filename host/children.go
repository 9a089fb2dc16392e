package host

import (
	"context"
	"errors"

	"github.com/tetratelabs/wazero/api"

	"github.com/wfhost/wfhost/abi"
)

// ChildRunner is a Handler that serves child_run (ABI.md §4.16): RunChild starts the child run
// req describes as the durable step name, or answers it from the journal, and replies with the
// child's output (awaited), its id (detached) or StatusStepFailed. The request is decoded and
// checked by abi.DecodeChildRun, its input redacted, before RunChild sees it.
type ChildRunner interface {
	RunChild(ctx context.Context, name string, req abi.ChildRun) (Reply, error)
}

func (st *state) childRun(ctx context.Context, mem api.Memory, nameArg, reqArg span) Reply {
	st.notInStep(abi.FuncChildRun)
	name := st.name(mem, abi.FuncChildRun, nameArg)
	// The child's input is a value the parent hands on, as continue_as_new's is: bounded by the
	// output limit here, and by the tenant's input limit where the child is created.
	limit := st.limits.MaxOutputBytes + abi.MaxOptionsBytes
	if int64(reqArg.n) > int64(limit) {
		st.fault = guestError(abi.CodePayloadTooLarge, "%s %q: request is %d bytes, the limit is %d", abi.FuncChildRun, name, reqArg.n, limit)
		panic(st.fault)
	}
	req, err := abi.DecodeChildRun(st.read(mem, abi.FuncChildRun, reqArg, limit, "request"))
	if errors.Is(err, abi.ErrNotStorable) {
		st.fault = guestError(abi.CodeNotStorable, "%s %q: the child's input cannot be stored: %v", abi.FuncChildRun, name, err)
		panic(st.fault)
	}
	if err != nil {
		st.violation("%s %q: %v", abi.FuncChildRun, name, err)
	}
	runner, ok := st.handler.(ChildRunner)
	if !ok {
		st.violation("%s: this host runs no child workflows", abi.FuncChildRun)
	}
	// The child's input and id are kept (the id as the child's idempotency key, shown by the
	// API): redacted like everything else the pass writes (ABI.md §4.12).
	req.Input = st.redactJSON(req.Input)
	if req.ID != "" {
		req.ID = st.redactName(req.ID)
	}
	return st.answer(runner.RunChild(ctx, name, req))
}
