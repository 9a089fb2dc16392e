// Command wfbench measures wfhost the way ../shared/peers measures DBOS, River, OpenWorkflow
// and Temporal: an engine in process on a real store runs workflows of N trivial steps from a
// committed fixture, and each measurement prints one RESULT line in the peers' format
// (mode, steps, n, c, elapsed, wf_per_s, steps_per_s, p50_ms, ...), plus the Postgres CPU
// spent per step and the transactions per workflow.
//
// Modes: direct (c goroutines each start a run and wait for its result, like the DBOS
// harness's direct mode), drain (start n runs, then wait for all), latency (one run at a time,
// start to result), idle (no work for -idle: how many queries an idle daemon makes), attack (the
// latency mode's n runs idle, then again while a second tenant uploads every hostile module of
// internal/wasmgen and runs every hostile workflow in a loop: two RESULT lines, phase=idle and
// phase=attack, with p99_ms, the cases tried and the ratio of the two p99s).
package main
