package host_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/host"
)

// TestQueryRespondWithNoQueryTraps: query_respond answers a query the handler asked (ABI.md
// §4.17); called in a pass whose handler takes no answer (a live pass) it traps with
// abi_violation, whatever its outcome.
func TestQueryRespondWithNoQueryTraps(t *testing.T) {
	t.Parallel()
	const want = "query_respond called but no query was asked"
	for _, outcome := range []int32{0, 1, 7} {
		m, err := runtime(t).Load(context.Background(), queryRespondModule(outcome))
		if err != nil || !m.Extism {
			t.Fatalf("load: %v", err)
		}
		_, err = activate(t, m, "w", "r", `{}`, newMemHandler(), host.Limits{})
		var ge *host.GuestError
		if !errors.As(err, &ge) || ge.Info.Code != abi.CodeABIViolation || !strings.Contains(ge.Info.Message, want) {
			t.Errorf("outcome %d: %v, want abi_violation containing %q", outcome, err, want)
		}
	}
}

// queryRespondModule is an Extism module whose workflow w calls query_respond(outcome, 0)
// unasked.
func queryRespondModule(outcome int32) []byte {
	// query_respond is imported after workflowModule's five imports and input_length.
	const queryRespond = 6
	// storeBlock takes under 64 bytes.
	desc := `{"workflows":[{"name":"w","version":"1"}]}`
	run := append(wasmI32Const(outcome), 0x42, 0, 0x10, queryRespond) // query_respond(outcome, 0)
	run = append(run, wasmI32Const(0)...)
	const outputSet = 3
	return extismModule([]wasmImport{
		{"extism:host/env", "alloc", []byte{wasmI64}, []byte{wasmI64}},
		{"extism:host/env", "store_u8", []byte{wasmI64, wasmI32}, nil},
		{"extism:host/env", "output_set", []byte{wasmI64, wasmI64}, nil},
		{"extism:host/user", "step_run", []byte{wasmI64, wasmI64}, []byte{wasmI64}},
		{"extism:host/env", "error_set", []byte{wasmI64}, nil},
		{"extism:host/user", "query_respond", []byte{wasmI32, wasmI64}, nil},
	}, []wasmFunc{
		{name: "wfhost_abi_version", results: []byte{wasmI32}, body: wasmI32Const(1)},
		{name: "wfhost_describe", results: []byte{wasmI32}, locals: []byte{wasmI64}, body: append(storeBlock(desc), 0x20, 0, 0x42, byte(len(desc)), 0x10, outputSet, 0x41, 0)},
		{name: "wfhost_run", results: []byte{wasmI32}, locals: []byte{wasmI64}, body: run},
	})
}
