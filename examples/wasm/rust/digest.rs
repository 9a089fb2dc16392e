//! digest: one step that sends a customer's digest, declared with flow control and completion
//! hooks (abi/ABI.md §7) exactly as examples/wasm/go/workflows_with_flow.go declares them, so
//! the host reads the same description from both modules.

use std::time::Duration;

use wfhost::{object, Context, Error, Flow, FromJson, Hook, RunEnd, Value, Workflow};

struct Input {
    customer_id: String,
}

impl FromJson for Input {
    fn from_json(v: &Value) -> Result<Input, Error> {
        Ok(Input {
            customer_id: v.field("customerId")?,
        })
    }
}

pub fn workflow() -> Workflow {
    Workflow::new("digest", "1", digest)
        // Per customer: one digest at a time, at most ten a minute, a burst of starts within
        // five seconds makes one run (the last start's input), and digests yield to other
        // work by 30 seconds.
        .flow(
            Flow::new()
                .concurrency("$.customerId", 1)
                .rate("$.customerId", 10, Duration::from_secs(60))
                .debounce("$.customerId", Duration::from_secs(5))
                .priority(-30),
        )
        // A sent digest starts a follow-up run (the steps example stands in for one); a digest
        // that failed or was cancelled is posted to the operators' webhook.
        .on_end(Hook::start(&[RunEnd::Completed], "steps").version("1"))
        .on_end(Hook::webhook(
            &[RunEnd::Failed, RunEnd::Cancelled],
            "https://ops.example.com/wfhost/digest",
        ))
}

fn digest(ctx: &Context, input: Input) -> Result<Value, Error> {
    let id = input.customer_id;
    Ok(ctx.step("send-digest", |_| Ok(object! { "customerId" => id, "sent" => true }))?)
}
