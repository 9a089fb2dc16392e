package snapshot

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/wfhost/wfhost/abi"
)

// SuspendingImports are the wfhost host functions a run can be unwound in (ABI.md §4.4-4.7):
// step_run (waiting for a retry's backoff, or a checkpoint at a step boundary), sleep,
// sleep_until and wait_event. Asyncify instruments every function that can reach one of them;
// every other import is assumed never to unwind.
//
// step_done also suspends a run (a failed attempt with attempts left) but is left out: a rewind
// into it would need a reply that tells the guest to run the callback again, which ABI v1 does
// not have. Such a pass is aborted as today, and the next one restores the latest image and
// reaches the step's step_run, which can unwind.
var SuspendingImports = []string{
	abi.ImportModule + "." + abi.FuncStepRun,
	abi.ImportModule + "." + abi.FuncSleep,
	abi.ImportModule + "." + abi.FuncSleepUntil,
	abi.ImportModule + "." + abi.FuncWaitEvent,
}

// features are the post-MVP features wasm-opt must accept: what Go, TinyGo, Rust and
// AssemblyScript emit (binaryen refuses a module using a feature it was not told of).
var features = []string{
	"--enable-bulk-memory", "--enable-nontrapping-float-to-int", "--enable-sign-ext",
	"--enable-mutable-globals", "--enable-multivalue",
}

// Options configure Transform. The zero value runs wasm-opt from PATH with SuspendingImports
// and no optimisation.
type Options struct {
	// WasmOpt is the wasm-opt program; "" looks it up in PATH.
	WasmOpt string
	// Imports are the imports that may unwind, as module.name; nil means SuspendingImports.
	Imports []string
	// Optimize is wasm-opt's optimisation flag run after asyncify ("-O", "-O1", "-Os"), or ""
	// for none. Asyncify roughly doubles code size unoptimised; -O takes back most of it.
	Optimize string
	// Under is a command line wasm-opt runs under, its program and arguments put after it: the
	// host runs it under its compile worker, which limits its memory and CPU time first. nil:
	// wasm-opt runs directly.
	Under []string
}

// Transform returns wasm with binaryen's asyncify applied (Asyncify) and every mutable global
// exported (ExportGlobals), and the names of those exports.
func Transform(ctx context.Context, wasm []byte, o Options) ([]byte, []string, error) {
	asy, err := Asyncify(ctx, wasm, o)
	if err != nil {
		return nil, nil, err
	}
	return ExportGlobals(asy, GlobalPrefix)
}

// Asyncify returns wasm with binaryen's asyncify applied: the exports asyncify_start_unwind,
// asyncify_stop_unwind, asyncify_start_rewind, asyncify_stop_rewind and asyncify_get_state
// added, and every function that can reach one of o.Imports instrumented. It runs wasm-opt in
// a temporary directory; ctx bounds it.
func Asyncify(ctx context.Context, wasm []byte, o Options) ([]byte, error) {
	bin := o.WasmOpt
	if bin == "" {
		var err error
		if bin, err = exec.LookPath("wasm-opt"); err != nil {
			return nil, fmt.Errorf("asyncify: wasm-opt (binaryen) not found: %w", err)
		}
	}
	imports := o.Imports
	if imports == nil {
		imports = SuspendingImports
	}
	dir, err := os.MkdirTemp("", "wfhost-asyncify-")
	if err != nil {
		return nil, fmt.Errorf("asyncify: %w", err)
	}
	defer os.RemoveAll(dir)
	in, out := filepath.Join(dir, "in.wasm"), filepath.Join(dir, "out.wasm")
	if err := os.WriteFile(in, wasm, 0o600); err != nil {
		return nil, fmt.Errorf("asyncify: %w", err)
	}
	args := append([]string{in}, features...)
	args = append(args, "--asyncify", "--pass-arg=asyncify-imports@"+strings.Join(imports, ","))
	if o.Optimize != "" {
		args = append(args, o.Optimize)
	}
	args = append(args, "-o", out)
	argv := append(append(append([]string(nil), o.Under...), bin), args...)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	// wasm-opt needs nothing from the caller's environment (a daemon's may hold credentials).
	cmd.Env = []string{}
	if err := cmd.Run(); err != nil {
		msg := stderr.String()
		if len(msg) > 2000 {
			msg = msg[:2000] + "..."
		}
		return nil, fmt.Errorf("asyncify: wasm-opt: %w: %s", err, msg)
	}
	asy, err := os.ReadFile(out)
	if err != nil {
		return nil, fmt.Errorf("asyncify: %w", err)
	}
	return asy, nil
}
