//! The example workflows in Rust: the same workflows as examples/wasm/go (same names, versions,
//! steps, inputs, outputs and errors), so that engine/conformance_test.go can require the same
//! transcripts of both. onboarding (steps, a sleep, retries, a wait for an event with a match and
//! a timeout), order-saga (compensation), poll (a repeated step name), relay (an event sent from a step), steps (N steps, for
//! crash tests and benchmarks), ticker (a loop by continue-as-new), timeouts (attempts the host stops at their timeout),
//! charge-or-pause (a step that pauses its run when its attempts run out), parent and child (child workflows),
//! parallel (a fan-out of branches joined as one step) and digest (flow control and completion
//! hooks in its declaration).
//!
//! Build: testdata/build-rust.sh (builds guest-sdk/rust as an rlib and links it with --extern).

mod children;
mod digest;
mod onboarding;
mod parallel;
mod pausing;
mod poll;
mod relay;
mod saga;
mod sha256;
mod steps;
mod ticker;
mod timeouts;

// Declared in the order of the Go module, whose init functions run by file name.
wfhost::workflows![
    onboarding::workflow(),
    poll::workflow(),
    relay::workflow(),
    saga::workflow(),
    steps::workflow(),
    ticker::workflow(),
    timeouts::workflow(),
    pausing::workflow(),
    children::child_workflow(),
    children::parent_workflow(),
    parallel::workflow(),
    digest::workflow()
];
