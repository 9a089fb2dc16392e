package main

// parallel_run and branch_done misused (abi/ABI.md §4.18), raw: the host must trap with a
// clear abi_violation, or fail the run with the code the ABI gives.

//go:wasmimport wfhost parallel_run
func rawParallelRun(namePtr, nameLen, reqPtr, reqLen uint32) uint64

//go:wasmimport wfhost branch_done
func rawBranchDone(outcome, ptr, n uint32)

// parallelRaw calls parallel_run with name and req as given.
func parallelRaw(name, req string) uint64 {
	n, r := []byte(name), []byte(req)
	return rawParallelRun(ptr(n), uint32(len(n)), ptr(r), uint32(len(r)))
}

// branchDoneRaw ends a branch with data as given.
func branchDoneRaw(outcome uint32, data string) {
	d := []byte(data)
	rawBranchDone(outcome, ptr(d), uint32(len(d)))
}

func init() {
	abuses["parallel-not-json"] = func() { parallelRaw("p", "{") }
	abuses["parallel-zero"] = func() { parallelRaw("p", `{"branches":0}`) }
	abuses["parallel-65"] = func() { parallelRaw("p", `{"branches":65}`) }
	abuses["parallel-bad-join"] = func() { parallelRaw("p", `{"branches":2,"join":"x"}`) }
	abuses["parallel-bad-max"] = func() { parallelRaw("p", `{"branches":2,"maxConcurrent":3}`) }
	abuses["parallel-invalid-utf8"] = func() { parallelRaw("p", "{\"branches\":2,\"join\":\"\xff\"}") }
	abuses["parallel-empty-name"] = func() { parallelRaw("", `{"branches":2}`) }
	abuses["parallel-out-of-bounds"] = func() { n := []byte("p"); rawParallelRun(ptr(n), 1, 0xfffffff0, 64) }
	abuses["parallel-huge"] = func() { n := []byte("p"); rawParallelRun(ptr(n), 1, ptr(n), 0xffffffff) }
	abuses["parallel-in-step"] = func() {
		n := []byte("s")
		rawStepRun(ptr(n), 1, 0, 0)
		parallelRaw("p", `{"branches":2}`)
	}
	abuses["branch-done-outside"] = func() { branchDoneRaw(0, "1") }
	// The rest are answered BRANCH by the test's handler first.
	abuses["branch-done-in-step"] = func() {
		parallelRaw("p", `{"branches":2}`)
		n := []byte("s")
		rawStepRun(ptr(n), 1, 0, 0)
		branchDoneRaw(0, "1")
	}
	abuses["branch-bad-outcome"] = func() { parallelRaw("p", `{"branches":2}`); branchDoneRaw(7, "1") }
	abuses["branch-output-not-json"] = func() { parallelRaw("p", `{"branches":2}`); branchDoneRaw(0, "not json") }
	abuses["branch-out-of-bounds"] = func() { parallelRaw("p", `{"branches":2}`); rawBranchDone(0, 0xfffffff0, 64) }
	abuses["branch-complete"] = func() { parallelRaw("p", `{"branches":2}`); o := []byte("1"); rawComplete(ptr(o), 1) }
	abuses["branch-continue"] = func() { parallelRaw("p", `{"branches":2}`); o := []byte("{}"); rawContinueAsNew(ptr(o), 2) }
	// Not violations: the ABI's own codes, or the first call's end.
	abuses["branch-huge"] = func() { parallelRaw("p", `{"branches":2}`); n := []byte("p"); rawBranchDone(0, ptr(n), 0xffffffff) }
	abuses["branch-not-storable"] = func() { parallelRaw("p", `{"branches":2}`); branchDoneRaw(0, `"\ud800"`) }
	abuses["branch-done-twice"] = func() {
		parallelRaw("p", `{"branches":2}`)
		branchDoneRaw(0, `{"first":true}`)
		branchDoneRaw(0, `{"second":true}`)
	}
	abuses["branch-fails"] = func() {
		parallelRaw("p", `{"branches":2}`)
		branchDoneRaw(1, `{"code":"branch_boom","message":"branch 1 fails","nonRetryable":true}`)
	}
}
