//! poll: check a status and sleep until it is ready; each repetition of a step name gets its own
//! journal key (check-status, check-status#1, ...).

use std::time::Duration;

use wfhost::{object, Context, Error, FromJson, Value, Workflow};

struct Input {
    until: i64,       // the status is ready on this check
    interval_ms: i64, // pause between checks; default 1s
}

impl FromJson for Input {
    fn from_json(v: &Value) -> Result<Input, Error> {
        Ok(Input {
            until: v.field("until")?,
            interval_ms: v.field("intervalMs")?,
        })
    }
}

pub fn workflow() -> Workflow {
    Workflow::new("poll", "1", poll)
}

fn poll(ctx: &Context, input: Input) -> Result<Value, Error> {
    let until = input.until.max(1);
    let interval = if input.interval_ms > 0 {
        Duration::from_millis(input.interval_ms as u64)
    } else {
        Duration::from_secs(1)
    };
    let mut check = 1i64;
    loop {
        let ready: bool = ctx.step("check-status", |_| Ok(check >= until))?;
        if ready {
            return Ok(object! { "checks" => check });
        }
        ctx.sleep("backoff", interval)?; // Err: cancelled
        check += 1;
    }
}
