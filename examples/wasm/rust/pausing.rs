//! charge-or-pause: a charge with two attempts that pauses the run when both fail (onExhausted
//! "pause"), for an operator to fix the cause and resume it, which tries the charge once more;
//! then a shipping step. Each attempt logs "charge attempt N".

use std::time::Duration;

use wfhost::{object, Backoff, Context, Error, FromJson, RetryPolicy, ToJson, Value, Workflow};

struct Input {
    fail_attempts: i64, // how many attempts of the charge fail before one succeeds
}

impl FromJson for Input {
    fn from_json(v: &Value) -> Result<Input, Error> {
        Ok(Input { fail_attempts: v.field("failAttempts")? })
    }
}

struct Charged {
    charge: String,
    shipped: bool,
}

impl ToJson for Charged {
    fn to_json(&self) -> Value {
        object! { "charge" => self.charge, "shipped" => self.shipped }
    }
}

pub fn workflow() -> Workflow {
    Workflow::new("charge-or-pause", "1", charge_or_pause)
}

fn charge_or_pause(ctx: &Context, input: Input) -> Result<Charged, Error> {
    let retry = RetryPolicy::new()
        .attempts(2)
        .backoff(Backoff::Fixed)
        .base(Duration::from_millis(10))
        .pause_when_exhausted();
    let charge: String = ctx.step_with_retry("charge", retry, |sc| {
        ctx.info(&format!("charge attempt {}", sc.attempt()));
        if (sc.attempt() as i64) <= input.fail_attempts {
            return Err(Error::new("declined", format!("card declined on attempt {}", sc.attempt())));
        }
        Ok("ch-1".to_string())
    })?;
    let shipped: bool = ctx.step("ship", |_| Ok(true))?;
    Ok(Charged { charge, shipped })
}
