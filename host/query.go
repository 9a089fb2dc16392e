package host

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/tetratelabs/wazero/api"

	"github.com/wfhost/wfhost/abi"
)

// queryRespond hands a query's answer to the Handler (ABI.md §4.17) and ends the pass: the
// answer is all a query wants of the guest. The result is held to what a run's output is held
// to (the output limit, storable, redacted), so a query can read out no more than the run
// could write.
func (st *state) queryRespond(ctx context.Context, mem api.Memory, outcome abi.Outcome, dataArg span) {
	st.notInStep(abi.FuncQueryRespond)
	qr, ok := st.handler.(QueryResponder)
	if !ok {
		st.violation("%s called but no query was asked", abi.FuncQueryRespond)
	}
	var data []byte
	switch outcome {
	case abi.OutcomeOK:
		if int64(dataArg.n) > int64(st.limits.MaxOutputBytes) {
			data = queryError(abi.CodePayloadTooLarge, "the query's result is %d bytes, the limit is %d", dataArg.n, st.limits.MaxOutputBytes)
			outcome = abi.OutcomeError
			break
		}
		out := st.read(mem, abi.FuncQueryRespond, dataArg, st.limits.MaxOutputBytes, "result")
		if len(out) == 0 {
			out = []byte("null")
		}
		if !json.Valid(out) {
			st.violation("%s: the result is not valid JSON", abi.FuncQueryRespond)
		}
		if err := abi.CheckJSON(out); err != nil {
			data, outcome = queryError(abi.CodeNotStorable, "the query's result cannot be stored: %v", err), abi.OutcomeError
			break
		}
		data = st.redactJSON(out)
	case abi.OutcomeError:
		limit := st.limits.MaxOutputBytes + abi.MaxSecretBytes
		dataArg.n = uint32(min(int64(dataArg.n), int64(limit)))
		info := st.storableError(abi.ParseErrorInfo(st.read(mem, abi.FuncQueryRespond, dataArg, limit, "error")))
		info.Message = st.cutText(info.Message, st.limits.MaxOutputBytes)
		data, _ = json.Marshal(info)
	default:
		st.violation("%s: outcome %d is neither 0 (ok) nor 1 (error)", abi.FuncQueryRespond, outcome)
	}
	err := qr.QueryRespond(ctx, outcome, data)
	if err == nil {
		err = errQueryAnswered
	}
	st.stop(err)
}

// errQueryAnswered ends a pass whose Handler took the answer and named no error to end it with.
var errQueryAnswered = errors.New("query answered")

func queryError(code, format string, args ...any) []byte {
	b, _ := json.Marshal(guestError(code, format, args...).Info)
	return b
}
