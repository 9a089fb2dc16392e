// Command examples is a workflow module with the example workflows: onboarding (steps, a
// sleep, retries, a wait for an event with a match and a timeout), an order saga with
// compensation, a polling loop, `relay` (an event sent from a step), `steps`, a workload of N
// steps for tests and benchmarks, `ticker` (a loop by continue-as-new), `timeouts`, and
// `digest`, whose declaration carries flow control and completion hooks (workflows_with_flow.go).
//
// Build: GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o examples.wasm .
// (make testdata builds it into testdata/examples.wasm). With -tags extism the same workflows
// are an Extism plug-in (testdata/extism_go.wasm), with tests_extism.go's three more for the
// host's Extism tests.
package main
