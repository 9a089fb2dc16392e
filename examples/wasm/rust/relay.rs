//! relay: send one event, to a run or to the whole tenant, from a step (abi/ABI.md §4.13): the
//! send lands once however often the step runs, and its outcome is the run's output. A refused
//! event (no such run, the run ended) fails the run with the code event_refused.

use wfhost::{Context, Error, FromJson, RetryPolicy, Value, Workflow};

struct Input {
    run_id: String,  // the run to signal; "" with broadcast
    broadcast: bool, // send to the whole tenant instead
    event: String,
    payload: Value,
}

impl FromJson for Input {
    fn from_json(v: &Value) -> Result<Input, Error> {
        Ok(Input {
            run_id: v.field("runId")?,
            broadcast: v.field("broadcast")?,
            event: v.field("event")?,
            payload: v["payload"].clone(),
        })
    }
}

pub fn workflow() -> Workflow {
    Workflow::new("relay", "1", relay).retry(RetryPolicy::new().attempts(1))
}

fn relay(ctx: &Context, input: Input) -> Result<Value, Error> {
    Ok(ctx.step("notify", |sc| {
        if input.broadcast {
            sc.broadcast(&input.event, &input.payload)
        } else {
            sc.signal(&input.run_id, &input.event, &input.payload)
        }
    })?)
}
