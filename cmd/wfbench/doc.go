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
// phase=attack, with p99_ms, the cases tried and the ratio of the two p99s), scale (below).
//
// With -via=http (viahttp.go; issue 17, point 3) the direct and latency modes go through the
// daemon's real HTTP API instead of engine calls: this process serves api.Handler on a
// loopback port, and a second process (this binary with -load-url) sends POST
// /v1/workflows/steps/runs?wait=60 from c callers over kept-alive connections, so the CPU this
// process reports (daemon_cpu_ms_per_wf) is the daemon's alone. Every RESULT line says via= and
// prints the same figures, so the two compare (BENCHMARKS.md, Through the API).
//
// The scale mode (scale.go, scaleenv.go; issue 13, point 9) runs the scenarios named by
// -scale, each on a fresh store (-store=postgres: the -db database's wfbench schema, reset;
// -store=embedded: a temporary data directory) with an engine in process, and prints one
// RESULT line per measurement with mode=scale scenario=NAME store=STORE:
//   - replay: one run at a time of the steps workflow with S steps (-scale-s) and a 1 ms
//     durable sleep after each, so every step is a new activation that replays the journal;
//     host and Postgres CPU per step, and the same run without sleeps for the ratio.
//   - timers: -scale-timers runs whose one sleep ends at the same instant; the lateness of
//     each wake (its next step's start minus its sleep's end, from the journal), wakes/s and
//     CPU per wake.
//   - signals: -scale-signals onboarding runs waiting for "verify", then one Signal each;
//     delivered/s until the last run completed, and CPU per signal.
//   - neighbour: tenant B's one-at-a-time 10-step runs (-scale-neighbour-n), alone and while
//     tenant A drains -scale-backlog 10-step runs: p50, p99 and the ratio of the p99s.
//   - sleeping: -scale-sleeping runs asleep for 12 hours: how fast they were started, the
//     process's RSS, one store claim of 32 (median of -scale-claims) and, on Postgres, the
//     statements per second of the idle engine over -scale-idle.
//   - recovery: a run of -scale-recovery journal entries whose host died holding its lease
//     (in process: a lease left to expire), taken up by a fresh engine with a new runtime;
//     wall and host CPU to its completion, beside a cold engine's first 1-step run.
//
// The defaults are the sizes (1,000,000 sleeping runs, S up to 10,000: long);
// `make bench/scale` runs quick ones.
package main
