//! onboarding: create a user, wait a little, send the welcome mail (retried), then wait for the
//! user to verify (an event matched on the user id, with a timeout) or nudge them.

use std::time::Duration;

use wfhost::{
    object, Backoff, Context, Error, FromJson, RetryPolicy, ToJson, Value, Wait, Waited, Workflow,
};

use crate::sha256;

/// WELCOME_STEP is the welcome mail's step name (the Go module's `renamed` build changes it).
const WELCOME_STEP: &str = "send-welcome";

struct Input {
    email: String,
    delay_ms: i64,          // pause before the welcome mail; default 1s
    fail_welcome: i64,      // the welcome mail fails on this many first attempts
    verify_timeout_ms: i64, // how long to wait for verification; default 24h
}

impl FromJson for Input {
    fn from_json(v: &Value) -> Result<Input, Error> {
        Ok(Input {
            email: v.field("email")?,
            delay_ms: v.field("delayMs")?,
            fail_welcome: v.field("failWelcome")?,
            verify_timeout_ms: v.field("verifyTimeoutMs")?,
        })
    }
}

struct User {
    id: String,
    email: String,
}

impl ToJson for User {
    fn to_json(&self) -> Value {
        object! { "id" => self.id, "email" => self.email }
    }
}

impl FromJson for User {
    fn from_json(v: &Value) -> Result<User, Error> {
        Ok(User {
            id: v.field("id")?,
            email: v.field("email")?,
        })
    }
}

struct Verification {
    via: String,
}

impl FromJson for Verification {
    fn from_json(v: &Value) -> Result<Verification, Error> {
        let _: String = v.field("userId")?;
        Ok(Verification {
            via: v.field("via")?,
        })
    }
}

struct Outcome {
    user_id: String,
    verified: bool,
    nudged: bool,
    outcome: String,
}

impl ToJson for Outcome {
    fn to_json(&self) -> Value {
        object! { "userId" => self.user_id, "verified" => self.verified, "nudged" => self.nudged, "outcome" => self.outcome }
    }
}

pub fn workflow() -> Workflow {
    // A broadcast of user.signed_up starts a run with the event's payload as its input.
    Workflow::new("onboarding", "1", onboarding)
        .retention_days(30)
        .trigger("user.signed_up")
}

/// lower maps each character to its simple lower case, as Go's strings.ToLower does (Rust's
/// str::to_lowercase applies context rules such as a word-final sigma, which Go does not).
fn lower(s: &str) -> String {
    s.chars()
        .map(|c| c.to_lowercase().next().unwrap_or(c))
        .collect()
}

/// status registers the answer to the query "status": the stage the run is at, the user it
/// onboards, and the query's argument echoed back (abi/ABI.md §4.17). Each stage registers it
/// again, replacing the last.
fn status(ctx: &Context, stage: &'static str, user_id: &str) {
    let user_id = user_id.to_string();
    ctx.on_query("status", move |arg: &Value| {
        Ok(object! { "stage" => stage, "userId" => user_id, "arg" => arg.clone() })
    });
}

fn onboarding(ctx: &Context, input: Input) -> Result<Outcome, Error> {
    status(ctx, "creating-user", "");
    let user = ctx.step("create-user", |_| {
        let sum = sha256::sum256(lower(&input.email).as_bytes());
        Ok(User {
            id: format!("u-{}", sha256::hex(&sum[..6])),
            email: input.email.clone(),
        })
    })?;

    status(ctx, "welcome-delay", &user.id);
    let delay = if input.delay_ms > 0 {
        Duration::from_millis(input.delay_ms as u64)
    } else {
        Duration::from_secs(1)
    };
    ctx.sleep("welcome-delay", delay)?; // Err: cancelled

    status(ctx, "welcoming", &user.id);
    let retry = RetryPolicy::new()
        .attempts(5)
        .backoff(Backoff::Fixed)
        .base(Duration::from_millis(20));
    ctx.step_with_retry(WELCOME_STEP, retry, |sc| {
        if i64::from(sc.attempt()) <= input.fail_welcome {
            return Err(Error::new(
                "smtp_unavailable",
                format!("mail server refused attempt {}", sc.attempt()),
            ));
        }
        ctx.info(&format!(
            "welcome mail sent to {} on attempt {}",
            user.email,
            sc.attempt()
        ));
        Ok("sent".to_string())
    })?;

    let timeout = if input.verify_timeout_ms > 0 {
        Duration::from_millis(input.verify_timeout_ms as u64)
    } else {
        Duration::from_secs(24 * 3600)
    };
    let wait = Wait::event("verify")
        .matching(object! { "userId" => user.id })
        .timeout(timeout);
    status(ctx, "awaiting-verify", &user.id);
    match ctx.wait_for_event::<Verification>("await-verify", wait)? {
        Waited::Event(v) => Ok(Outcome {
            user_id: user.id,
            verified: true,
            nudged: false,
            outcome: format!("verified via {}", v.via),
        }),
        Waited::TimedOut => {
            status(ctx, "nudging", &user.id);
            ctx.step("send-nudge", |_| {
                ctx.info(&format!("nudging {} to verify", user.email));
                Ok(true)
            })?;
            Ok(Outcome {
                user_id: user.id,
                verified: false,
                nudged: true,
                outcome: "nudged".to_string(),
            })
        }
    }
}
