//! timeouts: one step whose first attempts never return; the host stops each at its timeout and
//! retries the step (abi/ABI.md §4.4). With every attempt hung, the workflow sees the step's
//! failure and completes saying so.

use std::time::Duration;

use wfhost::{object, Backoff, Context, Error, FromJson, RetryPolicy, StepOptions, Value, Workflow};

struct Input {
    hang_attempts: i64, // the first attempts that never return
    timeout_ms: i64,    // each attempt's timeout; 0: none but the activation's wall time
    attempts: i64,      // the step's attempts; default 3
}

impl FromJson for Input {
    fn from_json(v: &Value) -> Result<Input, Error> {
        Ok(Input {
            hang_attempts: v.field("hangAttempts")?,
            timeout_ms: v.field("timeoutMs")?,
            attempts: v.field("attempts")?,
        })
    }
}

pub fn workflow() -> Workflow {
    Workflow::new("timeouts", "1", timeouts)
}

fn timeouts(ctx: &Context, input: Input) -> Result<Value, Error> {
    let attempts = if input.attempts != 0 { input.attempts as u32 } else { 3 };
    let opts = StepOptions::new()
        .timeout(Duration::from_millis(input.timeout_ms.max(0) as u64))
        .retry(
            RetryPolicy::new()
                .attempts(attempts)
                .backoff(Backoff::Fixed)
                .base(Duration::from_millis(1)),
        );
    let hang = input.hang_attempts;
    match ctx.step_with_options("slow-call", opts, |sc| {
        if i64::from(sc.attempt()) <= hang {
            spin();
        }
        Ok(i64::from(sc.attempt()))
    }) {
        Ok(n) => Ok(object! { "attempt" => n }),
        Err(e) => Ok(object! { "failed" => e.code.as_str() }),
    }
}

/// spin never returns: a callback stuck in a loop, which only the host can stop.
fn spin() {
    let mut spins: u64 = 0;
    loop {
        // A volatile write is a side effect the optimiser keeps: the loop stays a loop.
        unsafe { std::ptr::write_volatile(&mut spins, spins.wrapping_add(1)) };
    }
}
