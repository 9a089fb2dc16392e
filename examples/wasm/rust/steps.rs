//! steps: N trivial steps (keys s, s#1, ...), for crash tests and benchmarks. Each callback logs
//! "step ran index=N attempt=A", so tests can count how often each ran.

use std::time::Duration;

use wfhost::{object, Context, Error, FromJson, Value, Workflow};

struct Input {
    n: i64,
    sleep_ms: i64, // a durable sleep between steps when > 0
}

impl FromJson for Input {
    fn from_json(v: &Value) -> Result<Input, Error> {
        Ok(Input {
            n: v.field("n")?,
            sleep_ms: v.field("sleepMs")?,
        })
    }
}

pub fn workflow() -> Workflow {
    Workflow::new("steps", "1", steps)
}

fn steps(ctx: &Context, input: Input) -> Result<Value, Error> {
    let mut sum = 0i64;
    for i in 0..input.n {
        let v: i64 = ctx.step("s", |sc| {
            ctx.info(&format!("step ran index={} attempt={}", i, sc.attempt()));
            Ok(i)
        })?;
        sum += v;
        if input.sleep_ms > 0 && i < input.n - 1 {
            ctx.sleep("pause", Duration::from_millis(input.sleep_ms as u64))?; // Err: cancelled
        }
    }
    Ok(object! { "sum" => sum })
}
